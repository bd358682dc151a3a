package realnode

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one program the node started, in its own process group,
// SIGKILLed should this process die (and found by its command line by
// sweep should even that miss).
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(name, logPath, path string, args ...string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited is an error when the program has ended, with its log's end.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v):\n%s", p.name, p.cmd.ProcessState, tail(p.log, 40))
	default:
		return nil
	}
}

// stop sends SIGTERM and kills the group after grace.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}
