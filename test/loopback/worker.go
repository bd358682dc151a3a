package loopback

import (
	"context"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podWorker runs one pod (one UID) from binding to deletion. Everything it
// owns is touched only by its loop goroutine; the informers, probers and
// processes talk to it through channels.
type podWorker struct {
	k   *kubelet
	uid types.UID
	key types.NamespacedName
	dir string // the pod's own directory: volumes, working directory

	updates chan *corev1.Pod // the latest version of the pod, buffered 1
	kicks   chan struct{}    // something the pod reads may have changed
	events  chan func()      // probe verdicts, exits, calls, run in the loop
	gone    chan struct{}    // closed when the pod left the API server
	goneOne sync.Once

	// Loop state.
	pod       *corev1.Pod
	ip        string
	holdsIP   bool
	startTime time.Time
	// sandboxReady: the pod's volumes were set up once; the containers
	// that are only reported run from then on, and later changes of the
	// volumes wait for refreshAt.
	sandboxReady bool
	refreshAt    time.Time
	// stoppedAt is when the last container stopped during deletion.
	stoppedAt time.Time
	nats      natsContainer
	proxy     proxyState // Istio's istio-proxy (mesh_kubelet.go)
	// kubenats are the containers of the operator's image run as
	// processes, by name (kubenats_container.go).
	kubenats    map[string]*kubenatsContainer
	terminating bool
	// terminatingSince is when the deletion began.
	terminatingSince time.Time
	status           statusWriter
}

func newPodWorker(k *kubelet, pod *corev1.Pod) *podWorker {
	return &podWorker{
		k:       k,
		uid:     pod.UID,
		key:     types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name},
		dir:     k.podDir(pod),
		updates: make(chan *corev1.Pod, 1),
		kicks:   make(chan struct{}, 1),
		events:  make(chan func()),
		gone:    make(chan struct{}),
		pod:     pod,
	}
}

// update hands the worker the latest pod; an older one not yet taken is
// dropped. Only the informer's goroutine calls it.
func (w *podWorker) update(pod *corev1.Pod) {
	select {
	case <-w.updates:
	default:
	}
	w.updates <- pod
}

// kick wakes the worker to look at what the pod reads again.
func (w *podWorker) kick() {
	select {
	case w.kicks <- struct{}{}:
	default:
	}
}

// deleted tells the worker the pod is gone from the API server.
func (w *podWorker) deleted() { w.goneOne.Do(func() { close(w.gone) }) }

// send runs fn in the worker's loop; false when the worker has ended.
func (w *podWorker) send(ctx context.Context, fn func()) bool {
	select {
	case w.events <- fn:
		return true
	case <-ctx.Done():
		return false
	}
}

// loop runs until the pod is finished, or the kubelet stops.
func (w *podWorker) loop(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			w.shutdown()
			return
		case pod := <-w.updates:
			w.pod = pod
		case <-w.kicks:
		case fn := <-w.events:
			fn()
		case <-w.gone:
		case <-timer.C:
		}
		wake, done := w.sync(ctx)
		if done {
			return
		}
		timer.Stop()
		if !wake.IsZero() {
			timer.Reset(time.Until(wake))
		}
	}
}

// sync moves the pod one step toward what it should be and says when to
// look again (zero: on the next event).
func (w *podWorker) sync(ctx context.Context) (wake time.Time, done bool) {
	select {
	case <-w.gone:
		// Deleted without us (force deletion): the process goes at once.
		w.shutdown()
		return time.Time{}, true
	default:
	}
	if w.pod.DeletionTimestamp != nil {
		return w.terminate(ctx)
	}
	now := time.Now()
	if !w.holdsIP {
		if !w.claimAddress() {
			// The previous pod of this name still runs; its worker kicks
			// this namespace when it ends. The timer is a safety net.
			return now.Add(time.Second), false
		}
	}
	if w.startTime.IsZero() {
		w.startTime = now
	}
	_, _ = w.proxyGate(now)
	retry := w.syncContainer(ctx, now)
	retry = earliest(retry, w.syncKubenats(ctx, now))
	if _, wake := w.proxyGate(now); !wake.IsZero() && (retry.IsZero() || wake.Before(retry)) {
		retry = wake
	}
	w.writeStatus(ctx)
	return retry, false
}

// claimAddress gives the pod an address of its own once no earlier pod of
// its name holds one (its process still runs, on the same claims), and
// its DNS name from then on.
func (w *podWorker) claimAddress() bool {
	ip, ok, err := w.k.addrs.acquire(w.key, w.uid)
	if err != nil {
		w.nats.waitingFor("ContainerCreating", err.Error())
		return false
	}
	if !ok {
		return false
	}
	w.ip, w.holdsIP = ip, true
	if err := w.k.dns.add(w.pod, ip, w.k.isHeadless); err != nil {
		w.k.logf("%s: writing the hosts files: %v", w.key, err)
	}
	return true
}

// terminate runs the pod's graceful deletion: the preStop hook and SIGTERM,
// SIGKILL when the grace period runs out, then the final status and the
// deletion with grace period 0 that frees the name for a replacement.
func (w *podWorker) terminate(ctx context.Context) (time.Time, bool) {
	now := time.Now()
	if !w.terminating {
		// Before anything is done to the pod: a test's hook sees its
		// containers as the deletion found them.
		w.k.terminating.run(w.pod)
		now = time.Now()
		w.terminating, w.terminatingSince = true, now
		grace := time.Duration(deletionGrace(w.pod)) * time.Second
		w.nats.stop(w, "pod deleted", grace, now)
		w.stopKubenats(grace)
		w.k.logf("%s: terminating, grace period %s", w.key, grace)
	}
	if w.nats.run != nil {
		if w.nats.killDue(now) {
			w.k.logf("%s: grace period over, SIGKILL", w.key)
			w.nats.run.proc.kill()
			w.nats.killAt = time.Time{}
		}
		w.proxyTerminating(ctx, now)
		w.writeStatus(ctx)
		return w.nats.wakeForKill(), false // the exit arrives as an event
	}
	if w.nats.hookPending {
		return time.Time{}, false // the hook's end arrives as an event
	}
	if !w.proxyTerminating(ctx, now) {
		w.writeStatus(ctx)
		return time.Time{}, false // the proxy's exit arrives as an event
	}
	if w.kubenatsRunning() {
		w.writeStatus(ctx)
		return time.Time{}, false // their exits arrive as events
	}
	if w.stoppedAt.IsZero() {
		w.stoppedAt = now
	}
	w.writeStatus(ctx)
	// The name goes before the pod does: cluster DNS never answers for a
	// pod that no longer exists.
	if err := w.k.dns.remove(w.uid); err != nil {
		w.k.logf("%s: writing the hosts files: %v", w.key, err)
	}
	if !w.k.deletePod(ctx, w.pod) {
		return now.Add(time.Second), false
	}
	w.finish()
	return time.Time{}, true
}

// shutdown ends the process at once: the kubelet is stopping, or the pod
// was force-deleted.
func (w *podWorker) shutdown() {
	if w.nats.run != nil {
		w.nats.run.proc.kill()
		<-w.nats.run.proc.done
		w.nats.run.cancel()
		w.nats.run = nil
	}
	w.shutdownKubenats()
	w.shutdownProxy()
	w.finish()
}

// finish gives back what the pod held: its DNS name, then its address,
// its directory (claims live elsewhere), its place in the kubelet.
func (w *podWorker) finish() {
	if w.holdsIP {
		if err := w.k.dns.remove(w.uid); err != nil {
			w.k.logf("%s: writing the hosts files: %v", w.key, err)
		}
		w.k.addrs.release(w.key, w.uid)
		w.holdsIP = false
	}
	w.k.removePodDir(w.dir)
	w.k.workerDone(w)
}

// deletionGrace is how long the pod's containers get to stop.
func deletionGrace(pod *corev1.Pod) int64 {
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		return *g
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return *g
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// signalNats sends sig to the running nats container: Cluster.Kill.
func (w *podWorker) signalNats(sig syscall.Signal) error {
	if w.nats.run == nil {
		return errNotRunning
	}
	return w.nats.run.proc.signal(sig)
}
