package loopback

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The containers of the operator's own image (the metrics container,
// `kubenats exporter`) run as processes of Options.KubenatsBinary beside
// the nats-server, restarted when they exit, stopped with the pod. Without
// the binary they are reported running without running, as every other
// container is.

// kubenatsContainer is one such container across its runs.
type kubenatsContainer struct {
	name      string
	proc      *process // nil while not running
	runs      int
	restarts  int32
	last      *corev1.ContainerStateTerminated
	waiting   *corev1.ContainerStateWaiting
	notBefore time.Time
	backoff   time.Duration
	stopping  bool
}

// isKubenatsImage: the image is the operator's (ghcr.io/kubenats/kubenats,
// or any registry's kubenats/kubenats mirror of it).
func isKubenatsImage(image string) bool {
	repo := image
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if colon := strings.LastIndex(repo, ":"); colon > strings.LastIndex(repo, "/") {
		repo = repo[:colon]
	}
	return repo == "kubenats/kubenats" || strings.HasSuffix(repo, "/kubenats/kubenats")
}

// runsKubenats: the kubelet runs c as a process.
func (w *podWorker) runsKubenats(c *corev1.Container) bool {
	return w.k.kubenatsBinary != "" && c.Name != natsContainerName && isKubenatsImage(c.Image)
}

// kubenatsState is c's state, made on first use.
func (w *podWorker) kubenatsState(name string) *kubenatsContainer {
	if w.kubenats == nil {
		w.kubenats = map[string]*kubenatsContainer{}
	}
	s := w.kubenats[name]
	if s == nil {
		s = &kubenatsContainer{name: name}
		w.kubenats[name] = s
	}
	return s
}

// syncKubenats starts the operator-image containers that should run and
// are not, once the pod's volumes exist; it returns when to look again.
// They start beside the server, not after it (a real kubelet starts a
// pod's containers one after the other without waiting for any to be
// ready): an exporter that finds no server yet serves it as down.
func (w *podWorker) syncKubenats(ctx context.Context, now time.Time) time.Time {
	if !w.sandboxReady || w.terminating {
		return time.Time{}
	}
	var wake time.Time
	for i := range w.pod.Spec.Containers {
		c := &w.pod.Spec.Containers[i]
		if !w.runsKubenats(c) {
			continue
		}
		s := w.kubenatsState(c.Name)
		if s.proc != nil {
			continue
		}
		if now.Before(s.notBefore) {
			wake = earliest(wake, s.notBefore)
			continue
		}
		if err := w.startKubenats(ctx, c, s); err != nil {
			s.waiting = &corev1.ContainerStateWaiting{Reason: "RunContainerError", Message: err.Error()}
			w.k.logf("%s: %s: %v", w.key, c.Name, err)
			wake = earliest(wake, now.Add(time.Second))
		}
	}
	return wake
}

// startKubenats starts one run of c: its arguments expanded from its
// environment, its mount paths moved to the pod's directories and its
// pod-local addresses to the address the pod's app listens on (with a
// sidecar that is the app's address behind it, where the sidecar forwards
// the declared ports).
func (w *podWorker) startKubenats(ctx context.Context, c *corev1.Container, s *kubenatsContainer) error {
	dirs, err := w.volumeDirs(w.pod)
	if err != nil {
		return err
	}
	mounts, err := containerMounts(c, dirs)
	if err != nil {
		return err
	}
	env, err := containerEnv(w.podWithIP(), c, w.k)
	if err != nil {
		return err
	}
	command, args := commandLine(c, env, mounts)
	if len(command) > 0 {
		// The image's entrypoint is the kubenats binary; its arguments
		// follow whatever command names it.
		args = append(append([]string{}, command[1:]...), args...)
	}
	args = podLocalArgs(args, w.listenAddress())
	hosts, err := w.hostsFile()
	if err != nil {
		return err
	}
	logPath := filepath.Join(w.k.dir, "logs", c.Name+"_"+w.key.Namespace+"_"+w.key.Name+"_"+string(w.uid)+".log")
	appendFile(logPath, fmt.Sprintf("=== loopback kubelet: run %d of container %s of pod %s at %s: kubenats %s\n",
		s.runs+1, c.Name, w.key, time.Now().Format(time.RFC3339Nano), strings.Join(args, " ")))
	proc, err := startProcess(w.k.reaper, w.k.kubenatsBinary, args, env.list(), w.dir, logPath, hosts)
	if err != nil {
		return err
	}
	if s.last != nil {
		s.restarts++
	}
	s.runs++
	s.proc, s.waiting, s.stopping = proc, nil, false
	w.k.logf("%s: started container %s (kubenats), pid %d, run %d", w.key, c.Name, proc.pid(), s.runs)
	go func() {
		<-proc.done
		w.send(ctx, func() { w.kubenatsExited(s, proc) })
	}()
	return nil
}

// kubenatsExited records how a run ended and schedules the restart after
// the same back-off as the server's, unless the pod is going away.
func (w *podWorker) kubenatsExited(s *kubenatsContainer, proc *process) {
	if s.proc != proc {
		return
	}
	now := time.Now()
	term := &corev1.ContainerStateTerminated{ExitCode: int32(proc.state.ExitCode()), Reason: "Completed",
		StartedAt: metav1.NewTime(proc.startedAt), FinishedAt: metav1.NewTime(now)}
	if ws, ok := proc.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		term.Signal, term.ExitCode = int32(ws.Signal()), 128+int32(ws.Signal())
	}
	if term.ExitCode != 0 {
		term.Reason = "Error"
	}
	s.last, s.proc, s.stopping = term, nil, false
	w.k.logf("%s: container %s exited with %d", w.key, s.name, term.ExitCode)
	if w.terminating {
		return
	}
	if now.Sub(proc.startedAt) > stableRun {
		s.backoff = 0
	}
	s.backoff = min(max(2*s.backoff, firstBackoff), maxBackoff)
	s.notBefore = now.Add(s.backoff)
	s.waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", s.backoff, s.name, w.key.Name)}
}

// stopKubenats sends SIGTERM to every running operator-image container
// and SIGKILL after grace, in the background: a pod's containers are
// stopped together. Their exits arrive as events.
func (w *podWorker) stopKubenats(grace time.Duration) {
	for _, s := range w.kubenats {
		if s.proc == nil || s.stopping {
			continue
		}
		s.stopping = true
		go s.proc.stop(syscall.SIGTERM, grace)
	}
}

// kubenatsRunning: some operator-image container has not exited yet.
func (w *podWorker) kubenatsRunning() bool {
	for _, s := range w.kubenats {
		if s.proc != nil {
			return true
		}
	}
	return false
}

// shutdownKubenats kills them at once (the kubelet stops, or the pod was
// force-deleted).
func (w *podWorker) shutdownKubenats() {
	for _, s := range w.kubenats {
		if s.proc != nil {
			s.proc.kill()
			<-s.proc.done
			s.proc = nil
		}
	}
}

// kubenatsStatus is c's status as its process runs. It has no probes:
// running is started and ready, as the kubelet reports a container
// without probes.
func (w *podWorker) kubenatsStatus(c *corev1.Container) corev1.ContainerStatus {
	s := w.kubenatsState(c.Name)
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "loopback://" + c.Image,
		RestartCount: s.restarts, Started: ptr.To(s.proc != nil), Ready: s.proc != nil && !s.stopping}
	if s.last != nil {
		cs.LastTerminationState.Terminated = s.last
	}
	switch {
	case s.proc != nil:
		cs.ContainerID = fmt.Sprintf("loopback://%s_%s_%s_%d", w.key.Namespace, w.key.Name, c.Name, s.runs)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(s.proc.startedAt)}
	case w.terminating && s.last != nil:
		cs.State.Terminated = s.last
		cs.LastTerminationState.Terminated = nil
	case s.waiting != nil:
		cs.State.Waiting = s.waiting
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return cs
}
