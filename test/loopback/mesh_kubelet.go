package loopback

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// The loopback kubelet's side of the mesh: a pod with Istio's proxy
// (mesh_pod.go) gets a sidecar of the mesh model, started, reported,
// crashed and drained as the istio-proxy container would be.

// proxyStartDelay is how long a classic sidecar that the app does not
// wait for takes to come up after the app started (Envoy fetching its
// first configuration): the app's first connections meet no proxy.
const proxyStartDelay = time.Second

// proxyState is the pod's istio-proxy container across its runs.
type proxyState struct {
	spec      proxySpec
	has       bool // the pod has a proxy and the cluster runs Istio
	up        bool // the sidecar runs (joined the mesh, not crashed)
	joined    bool // the sidecar is registered with the mesh
	startedAt time.Time
	restarts  int32
	last      *corev1.ContainerStateTerminated
	// restartAt is the end of a crashed proxy's restart back-off.
	restartAt time.Time
	// stopping: the proxy got its SIGTERM and drains; stopped: it exited.
	stopping, stopped bool
	stoppedAt         time.Time
}

// readProxy looks at the pod's containers once: injection happens at
// creation, so a pod's proxy never changes.
func (w *podWorker) readProxy() {
	if w.k.mesh == nil || w.proxy.has {
		return
	}
	if spec, ok := proxyOf(w.pod); ok {
		w.proxy.spec, w.proxy.has = spec, true
	}
}

// proxyGate starts the proxy when it should run and says whether the app
// container may start now; wake is when to look again.
func (w *podWorker) proxyGate(now time.Time) (appMayStart bool, wake time.Time) {
	w.readProxy()
	p := &w.proxy
	if !p.has || p.stopping || p.stopped {
		return true, time.Time{}
	}
	first := !p.joined
	// A native sidecar, or a classic one the app waits for, runs first; a
	// classic one without holdApplicationUntilProxyStarts comes up beside
	// the app, a little later.
	if first && !p.spec.native && !p.spec.hold {
		if w.nats.run == nil {
			return true, time.Time{}
		}
		if now.Before(w.nats.run.proc.startedAt.Add(proxyStartDelay)) {
			return true, w.nats.run.proc.startedAt.Add(proxyStartDelay)
		}
	}
	if !p.up {
		if now.Before(p.restartAt) {
			return w.proxyAllowsApp(), p.restartAt
		}
		if err := w.startProxy(); err != nil {
			w.k.logf("%s: istio-proxy: %v", w.key, err)
			return w.proxyAllowsApp(), now.Add(time.Second)
		}
	}
	return true, time.Time{}
}

// proxyAllowsApp: while the proxy is not up, an app that already ran may
// go on (a proxy crash does not stop the app); a first start waits when
// the proxy must run first.
func (w *podWorker) proxyAllowsApp() bool {
	p := &w.proxy
	return p.joined || (!p.spec.native && !p.spec.hold)
}

func (w *podWorker) startProxy() error {
	p := &w.proxy
	m := w.k.mesh
	if p.joined {
		if err := m.reviveSidecar(w.key); err != nil {
			return err
		}
		p.restarts++
	} else {
		if !w.holdsIP {
			return errors.New("the pod has no address yet")
		}
		if _, err := m.startSidecar(workloadOf(w.pod, w.ip, p.spec)); err != nil {
			return err
		}
		p.joined = true
	}
	p.up, p.startedAt = true, time.Now()
	w.k.logf("%s: istio-proxy running (native sidecar %v, drain %s)", w.key, p.spec.native, p.spec.drain)
	return nil
}

// killProxy crashes the proxy (Cluster.KillProxy); the kubelet starts it
// again after down.
func (w *podWorker) killProxy(down time.Duration) error {
	p := &w.proxy
	if !p.up {
		return fmt.Errorf("%s: istio-proxy is not running", w.key)
	}
	if err := w.k.mesh.crashSidecar(w.key); err != nil {
		return err
	}
	now := time.Now()
	p.up, p.restartAt = false, now.Add(down)
	p.last = &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9, Reason: "Error",
		StartedAt: metav1.NewTime(p.startedAt), FinishedAt: metav1.NewTime(now)}
	w.k.logf("%s: istio-proxy killed, restarting in %s", w.key, down)
	return nil
}

// stopProxy sends the proxy its SIGTERM: it drains for its drain duration
// (bounded by what is left of the grace period) in the background and
// reports its exit to the loop.
func (w *podWorker) stopProxy(ctx context.Context, graceLeft time.Duration) {
	p := &w.proxy
	if !p.joined || p.stopping || p.stopped {
		return
	}
	p.stopping = true
	drain := min(p.spec.drain, max(graceLeft, 0))
	w.k.logf("%s: stopping istio-proxy, drain %s", w.key, drain)
	go func() {
		w.k.mesh.stopSidecar(w.key, drain)
		w.send(ctx, func() {
			p.stopping, p.stopped, p.up, p.stoppedAt = false, true, false, time.Now()
		})
	}()
}

// proxyTerminating moves the proxy through the pod's deletion: a classic
// sidecar gets SIGTERM with the app, a native one once the app containers
// have exited. done reports that nothing of the proxy runs any more.
func (w *podWorker) proxyTerminating(ctx context.Context, now time.Time) (done bool) {
	p := &w.proxy
	if !p.joined || p.stopped {
		return true
	}
	graceLeft := time.Duration(deletionGrace(w.pod))*time.Second - now.Sub(w.terminatingSince)
	if !p.spec.native || w.nats.run == nil {
		w.stopProxy(ctx, graceLeft)
	}
	return false
}

// shutdownProxy ends the proxy at once (the kubelet stops, the pod was
// force-deleted).
func (w *podWorker) shutdownProxy() {
	if w.proxy.joined && !w.proxy.stopped {
		w.k.mesh.stopSidecar(w.key, 0)
		w.proxy.stopped = true
	}
}

// proxyStatus is the istio-proxy container's status: running and ready
// while the sidecar is up (its startup and readiness probes ask Envoy's
// /healthz/ready, which answers as soon as it listens).
func (w *podWorker) proxyStatus(c *corev1.Container) corev1.ContainerStatus {
	p := &w.proxy
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "loopback://" + c.Image,
		RestartCount: p.restarts, Started: ptr.To(p.up), Ready: p.up}
	if p.last != nil {
		cs.LastTerminationState.Terminated = p.last
	}
	switch {
	case p.up || p.stopping:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(p.startedAt)}
	case p.stopped:
		cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed",
			StartedAt: metav1.NewTime(p.startedAt), FinishedAt: metav1.NewTime(p.stoppedAt)}
	case p.joined:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off restarting failed container=%s pod=%s", istioProxyContainer, w.key.Name)}
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	}
	if p.stopping {
		cs.Ready = false
	}
	return cs
}

// initContainerStatuses reports the pod's init containers: Istio's
// istio-init and istio-validation (and any other run-to-completion init
// container) as completed once the sandbox is set up, the native
// istio-proxy as it runs.
func (w *podWorker) initContainerStatuses() (statuses []corev1.ContainerStatus, initialized, sidecarsReady bool) {
	initialized, sidecarsReady = true, true
	for i := range w.pod.Spec.InitContainers {
		c := &w.pod.Spec.InitContainers[i]
		if c.Name == istioProxyContainer && w.proxy.has {
			cs := w.proxyStatus(c)
			statuses = append(statuses, cs)
			initialized = initialized && w.proxy.joined
			sidecarsReady = sidecarsReady && cs.Ready
			continue
		}
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "loopback://" + c.Image, Started: ptr.To(false)}
		if w.sandboxReady {
			cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed",
				StartedAt: metav1.NewTime(w.startTime), FinishedAt: metav1.NewTime(w.startTime)}
			cs.Ready = true
		} else {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
			initialized = false
		}
		statuses = append(statuses, cs)
	}
	return statuses, initialized, sidecarsReady
}

// listenAddress is where the pod's app listens: the app address behind a
// sidecar (the pod's localhost in the model), the pod's own otherwise.
func (w *podWorker) listenAddress() string {
	w.readProxy()
	if w.proxy.has {
		return w.k.mesh.AppIP(w.key.Namespace, w.key.Name)
	}
	return w.ip
}

// appMayStart: the app container starts once the proxy that must run
// first runs.
func (w *podWorker) appMayStart() bool {
	w.readProxy()
	return !w.proxy.has || w.proxy.up || w.proxyAllowsApp()
}

// hostsFile is the app's /etc/hosts: the namespace's, or a meshed pod's
// own (its sidecar's view of the cluster).
func (w *podWorker) hostsFile() (string, error) {
	w.readProxy()
	if !w.proxy.has {
		return w.k.dns.hostsFile(w.key.Namespace), nil
	}
	return w.k.dns.podHostsFile(w.uid, w.key)
}

// useMesh makes the kubelet run sidecars for injected pods.
func (k *kubelet) useMesh(m *Mesh) {
	if m == nil {
		return
	}
	k.mesh = m
	k.dns.view = m.hostsView
	k.dns.recordsChanged = m.push
	m.listEndpoints = k.dns.endpoints
	m.listServices = func() []meshService {
		if k.services == nil {
			return nil // before the kubelet started
		}
		list, err := k.services.List(labels.Everything())
		if err != nil {
			return nil
		}
		out := make([]meshService, 0, len(list))
		for _, svc := range list {
			out = append(out, meshServiceOf(svc))
		}
		return out
	}
	m.mu.Lock()
	m.changed = func() {
		if err := k.dns.refresh(); err != nil {
			k.logf("mesh: rewriting the hosts files: %v", err)
		}
	}
	m.mu.Unlock()
}
