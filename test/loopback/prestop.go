package loopback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The preStop hook, executed as written: its command runs as a process
// "in" the container (the image's binary for it, the container's
// environment, working directory, mounts and hosts file), bounded by the
// termination grace period. When it fails the kubelet says so (a
// FailedPreStopHook event) and goes on as a real one does: SIGTERM.

// errHookTimedOut: the hook was still running when the grace period ended.
var errHookTimedOut = errors.New("the preStop hook did not complete within the termination grace period")

// minimumGrace is what the kubelet leaves the container after a hook that
// used up the grace period: SIGTERM, and SIGKILL 2 s later at the earliest.
const minimumGrace = 2 * time.Second

// hookReturnTime stands for the container runtime's round trip between the
// hook's exit and the kubelet's SIGTERM (ExecSync returning, StopContainer
// called): some milliseconds in a real cluster. nats-server enters lame
// duck mode on a goroutine of its own after the hook's signal, and ignores
// SIGTERM only once it has: a SIGTERM at the very instant could overtake
// it.
const hookReturnTime = 50 * time.Millisecond

// preStopCommand is the container's preStop exec command, nil for none.
func preStopCommand(c *corev1.Container) []string {
	if c == nil || c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		return nil
	}
	return c.Lifecycle.PreStop.Exec.Command
}

// runPreStop starts the hook of run's container; its end arrives in the
// loop as preStopEnded, which sends SIGTERM.
func (w *podWorker) runPreStop(run *containerRun, c *corev1.Container, grace time.Duration) {
	cmd := append([]string(nil), preStopCommand(c)...)
	outPath := filepath.Join(w.dir, "prestop.log")
	_ = os.Remove(outPath)
	w.nats.hookRunning, w.nats.hookPending = true, true
	hook, err := w.startHook(run, c.Image, cmd, outPath)
	if err != nil {
		w.preStopEnded(run, c.Name, cmd, fmt.Errorf("command '%s' exited with 126: %v", strings.Join(cmd, " "), err), outPath)
		return
	}
	w.k.logf("%s: preStop hook started, pid %d: %s", w.key, hook.pid(), strings.Join(cmd, " "))
	ctx := w.k.ctx
	w.k.wg.Add(1) // the loop runs in the kubelet's wait group: stop has not passed Wait
	go func() {
		defer w.k.wg.Done()
		var err error
		select {
		case <-hook.done:
			if !hook.state.Success() {
				err = fmt.Errorf("command '%s' exited with %d", strings.Join(cmd, " "), hook.state.ExitCode())
			}
		case <-time.After(grace):
			hook.kill()
			<-hook.done
			err = errHookTimedOut
		case <-ctx.Done():
			hook.kill()
			<-hook.done
			return
		}
		w.send(ctx, func() { w.preStopEnded(run, c.Name, cmd, err, outPath) })
	}()
}

// startHook execs cmd into run's container: found in the image as the
// container's command would be, its paths moved to the pod's directories.
func (w *podWorker) startHook(run *containerRun, image string, cmd []string, outPath string) (*process, error) {
	if len(cmd) == 0 {
		return nil, errors.New("exec: no command")
	}
	if err := executableIn(image, cmd[0]); err != nil {
		return nil, err
	}
	args := make([]string, 0, len(cmd)-1)
	for _, a := range cmd[1:] {
		args = append(args, rewritePaths(a, run.mounts))
	}
	return startProcess(w.k.reaper, run.binary, args, run.env, run.workDir, outPath, w.k.dns.hostsFile(w.key.Namespace))
}

// preStopEnded reports how the hook ended (a failure as an event, whether
// or not the container is still there: a real kubelet reports it too) and
// stops the container with SIGTERM, unless it has exited meanwhile.
func (w *podWorker) preStopEnded(run *containerRun, container string, cmd []string, err error, outPath string) {
	switch {
	case errors.Is(err, errHookTimedOut):
		w.k.logf("%s: %v", w.key, err)
	case err != nil:
		out, _ := os.ReadFile(outPath)
		if len(out) > 1024 {
			out = out[len(out)-1024:]
		}
		msg := fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
			cmd, container, fmt.Sprintf("%s_%s(%s)", w.key.Name, w.key.Namespace, w.uid), err, strings.TrimSpace(string(out)))
		w.k.logf("%s: FailedPreStopHook: %s", w.key, msg)
		w.k.event(w.pod, corev1.EventTypeWarning, "FailedPreStopHook", msg)
	default:
		w.k.logf("%s: preStop hook completed", w.key)
	}
	n := &w.nats
	n.hookPending = false
	if n.run != run {
		return // exited meanwhile; natsExited cleared hookRunning
	}
	n.hookRunning = false
	if now := time.Now(); !n.killAt.IsZero() && n.killAt.Before(now.Add(minimumGrace)) {
		n.killAt = now.Add(minimumGrace)
	}
	proc := run.proc
	time.AfterFunc(hookReturnTime, func() { _ = proc.signal(syscall.SIGTERM) })
}
