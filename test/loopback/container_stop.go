package loopback

import (
	"fmt"
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
	if c := findContainer(w.pod, natsContainerName); preStopCommand(c) != nil {
		w.runPreStop(n.run, c, grace)
		return
	}
	_ = n.run.proc.signal(syscall.SIGTERM)
}

// killDue says whether the grace period of a stopping run is over: SIGKILL
// now. Not while its preStop hook runs: the hook has the grace period, and
// the container its minimum after it.
func (n *natsContainer) killDue(now time.Time) bool {
	return !n.hookRunning && !n.killAt.IsZero() && !now.Before(n.killAt)
}

// wakeForKill is when a stopping run must be looked at again; zero while
// its hook runs (its end arrives as an event).
func (n *natsContainer) wakeForKill() time.Time {
	if n.hookRunning {
		return time.Time{}
	}
	return n.killAt
}

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
	n.last, n.run, n.started, n.ready, n.stopping, n.killAt, n.hookRunning = term, nil, false, false, false, time.Time{}, false
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
