package loopback

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// How a run of the nats container ends: stopped by the kubelet (deletion,
// failed probe) or by itself, and restarted unless the pod is going away.

// stop ends the running process the way the kubelet kills a container: the
// preStop hook, SIGTERM, and SIGKILL once grace has passed. A second stop
// can only shorten the grace period.
func (n *natsContainer) stop(w *podWorker, reason string, grace time.Duration, now time.Time) {
	if n.run == nil {
		return
	}
	deadline := now.Add(grace)
	if n.stopping {
		if !n.killAt.IsZero() && deadline.Before(n.killAt) {
			n.killAt = deadline
		}
		return
	}
	n.stopping, n.killAt, n.ready = true, deadline, false
	w.k.logf("%s: stopping nats (%s), grace %s", w.key, reason, grace)
	proc := n.run.proc
	if c := findContainer(w.pod, natsContainerName); c != nil {
		if sig, ok := preStopSignal(c); ok {
			_ = proc.signal(sig)
			// A real kubelet sends SIGTERM once the exec hook has ended: a
			// process started, signalling and exiting, some milliseconds
			// in all. nats-server enters lame duck mode on a goroutine of
			// its own; SIGTERM at the same instant could overtake it.
			time.AfterFunc(preStopHookTime, func() { _ = proc.signal(syscall.SIGTERM) })
			return
		}
	}
	_ = proc.signal(syscall.SIGTERM)
}

// preStopHookTime is how long the preStop hook takes, as the kubelet that
// waits for it sees it.
const preStopHookTime = 50 * time.Millisecond

// natsExited records how a run ended and, unless the pod is going away,
// schedules the restart (restartPolicy Always) after the back-off.
func (w *podWorker) natsExited(run *containerRun) {
	n := &w.nats
	if n.run != run {
		return
	}
	run.cancel()
	now := time.Now()
	st := run.proc.state
	term := &corev1.ContainerStateTerminated{
		ExitCode:    int32(st.ExitCode()),
		Reason:      "Completed",
		StartedAt:   metav1.NewTime(run.proc.startedAt),
		FinishedAt:  metav1.NewTime(now),
		ContainerID: containerID(w, run),
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		term.Signal, term.ExitCode = int32(ws.Signal()), 128+int32(ws.Signal())
	}
	if term.ExitCode != 0 {
		term.Reason = "Error"
	}
	n.last, n.run, n.started, n.ready, n.stopping, n.killAt = term, nil, false, false, false, time.Time{}
	w.k.logf("%s: nats run %d exited with %d", w.key, run.id, term.ExitCode)
	if w.terminating {
		return
	}
	if now.Sub(run.proc.startedAt) > stableRun {
		n.backoff = 0
	}
	n.backoff = min(max(2*n.backoff, firstBackoff), maxBackoff)
	n.notBefore = now.Add(n.backoff)
	n.waitingFor("CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", n.backoff, natsContainerName, w.key.Name))
}

func containerID(w *podWorker, run *containerRun) string {
	return fmt.Sprintf("loopback://%s_%s_%d", w.key.Namespace, w.key.Name, run.id)
}

// preStopSignal is the signal the container's preStop hook sends, for the
// hook the operator uses: `nats-server --signal <command>[=<pid file>]`.
func preStopSignal(c *corev1.Container) (syscall.Signal, bool) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		return 0, false
	}
	cmd := c.Lifecycle.PreStop.Exec.Command
	if len(cmd) < 3 || filepath.Base(cmd[0]) != "nats-server" {
		return 0, false
	}
	for i, a := range cmd[:len(cmd)-1] {
		if a != "--signal" && a != "-sl" {
			continue
		}
		command, _, _ := strings.Cut(cmd[i+1], "=")
		sig, ok := map[string]syscall.Signal{
			"ldm": syscall.SIGUSR2, "reload": syscall.SIGHUP, "reopen": syscall.SIGUSR1,
			"quit": syscall.SIGINT, "term": syscall.SIGTERM, "stop": syscall.SIGKILL,
		}[command]
		return sig, ok
	}
	return 0, false
}
