package loopback

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one started program in its own process group.
type process struct {
	cmd       *exec.Cmd
	startedAt time.Time
	done      chan struct{} // closed when it has exited and been reaped
	state     *os.ProcessState
}

// startProcess runs path with args and env in dir, appending its output to
// logPath. The child gets its own process group, so that a signal reaches
// everything it started, and SIGKILL when this process dies (Pdeathsig);
// the reaper covers what Pdeathsig misses. With hosts set, the child runs
// in a mount namespace of its own where that file is /etc/hosts
// (CommandWithHosts).
func startProcess(r *reaper, path string, args, env []string, dir, logPath, hosts string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// The child writes to its own copy of the descriptor, so ours is closed
	// right after the start and no goroutine copies output.
	defer log.Close()
	cmd := CommandWithHosts(hosts, path, args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	pid := cmd.Process.Pid
	r.watch(pid)
	p := &process{cmd: cmd, startedAt: time.Now(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		r.forget(pid)
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// signal sends sig to the program itself.
func (p *process) signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return fmt.Errorf("process %d has exited", p.pid())
	default:
	}
	return syscall.Kill(p.pid(), sig)
}

// kill SIGKILLs the whole group.
func (p *process) kill() {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	}
}

// stop asks the program to end with sig and kills its group when it has not
// ended after grace; it returns once the program is gone.
func (p *process) stop(sig syscall.Signal, grace time.Duration) {
	_ = p.signal(sig)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	p.kill()
	<-p.done
}

// CommandWithHosts is the command that runs path with args in its own
// process group, SIGKILLed when this process dies, and, with hosts set, in
// a mount namespace of its own where that file is /etc/hosts and a
// resolv.conf beside it (resolvConf) is /etc/resolv.conf: a shell
// bind-mounts them, then execs path, so the pid stays the program's. This
// is how every pod's nats-server resolves pod DNS names; the benchmark's
// hand-started servers run the same way.
func CommandWithHosts(hosts, path string, args ...string) *exec.Cmd {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if hosts == "" {
		cmd := exec.Command(path, args...)
		cmd.SysProcAttr = attr
		return cmd
	}
	resolv := filepath.Join(filepath.Dir(hosts), "resolv.conf")
	if _, err := os.Stat(resolv); err != nil {
		_ = os.WriteFile(resolv, []byte(resolvConf), 0o644)
	}
	script := `mount --bind "$0" /etc/hosts && mount --bind "$1" /etc/resolv.conf && shift && exec "$@"`
	shell := append([]string{"-c", script, hosts, resolv, path}, args...)
	cmd := exec.Command("/bin/sh", shell...)
	// Go makes the new namespace's mounts private before the exec, so the
	// bind mounts never reach this machine's own files.
	attr.Unshareflags = syscall.CLONE_NEWNS
	cmd.SysProcAttr = attr
	return cmd
}
