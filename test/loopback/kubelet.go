package loopback

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nodeIP is the node's address, and every pod's host IP.
const nodeIP = "127.0.0.1"

// kubelet is the loopback kubelet: it binds every pending pod to one of
// its nodes (there is no scheduler: zones.go places) and runs each bound
// pod in a podWorker.
type kubelet struct {
	cs   kubernetes.Interface
	node string // the first node's name
	// nodes are the nodes this kubelet runs: one, or one per zone.
	nodes []loopbackNode
	// placing serializes bindings, so that each placement sees the ones
	// before it (placed: bound, perhaps not in the cache yet).
	placing      sync.Mutex
	placed       map[types.UID]string
	dir          string // pods/, claims/, claim-images/, logs/ below it
	natsBinaries string // bin/nats-server: <version>/nats-server
	// kubenatsBinary runs the containers of the operator's own image
	// (Options.KubenatsBinary); empty: they are only reported running.
	kubenatsBinary string
	// refreshDelay is the shortest delay before a pod sees a change of its
	// ConfigMap and Secret volumes (volume_refresh.go); refreshDelays
	// holds the namespaces that have their own.
	refreshDelay  time.Duration
	refreshDelays refreshDelays
	addrs         *addressBook
	dns           *dnsTable
	reaper        *reaper
	log           *fileLog
	mesh          *Mesh // the mesh model, when the cluster runs Istio

	factory    informers.SharedInformerFactory
	configMaps corelisters.ConfigMapLister
	secrets    corelisters.SecretLister
	services   corelisters.ServiceLister
	claims     corelisters.PersistentVolumeClaimLister
	pods       corelisters.PodLister
	nodeLister corelisters.NodeLister

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	workers  map[types.UID]*podWorker
	finished map[types.UID]bool // workers that ended: late events are ignored
	binding  map[types.UID]bool
	// bindAgain: a binding was asked for while one was in flight.
	bindAgain map[types.UID]bool

	claimMounts claimMounts
	// terminating are the tests' hooks into the start of a pod's graceful
	// deletion (terminating_hooks.go).
	terminating terminatingHooks
}

func newKubelet(cs kubernetes.Interface, node, dir, natsBinaries string, addrs *addressBook, r *reaper, log *fileLog) *kubelet {
	return &kubelet{
		cs: cs, node: node, dir: dir, natsBinaries: natsBinaries, addrs: addrs, reaper: r, log: log,
		dns:          newDNSTable(filepath.Join(dir, "dns")),
		refreshDelay: DefaultConfigRefreshDelay,
		workers:      map[types.UID]*podWorker{}, finished: map[types.UID]bool{}, binding: map[types.UID]bool{},
		bindAgain: map[types.UID]bool{}, placed: map[types.UID]string{},
	}
}

// start registers the node and begins watching pods.
func (k *kubelet) start(ctx context.Context) error {
	k.ctx, k.cancel = context.WithCancel(ctx)
	for _, sub := range []string{"pods", "claims", "claim-images", "logs", "dns"} {
		if err := os.MkdirAll(filepath.Join(k.dir, sub), 0o755); err != nil {
			return err
		}
	}
	if len(k.nodes) == 0 {
		k.nodes = zonedNodes(k.node, nil)
	}
	for _, n := range k.nodes {
		if err := registerNode(k.ctx, k.cs, n.name, n.labels); err != nil {
			return err
		}
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			heartbeat(k.ctx, k.cs, n.name, k.logf)
		}()
	}

	k.factory = informers.NewSharedInformerFactory(k.cs, 0)
	core := k.factory.Core().V1()
	k.configMaps, k.secrets = core.ConfigMaps().Lister(), core.Secrets().Lister()
	k.services, k.claims = core.Services().Lister(), core.PersistentVolumeClaims().Lister()
	k.pods, k.nodeLister = core.Pods().Lister(), core.Nodes().Lister()
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{core.Pods().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    k.onPod,
			UpdateFunc: func(_, obj any) { k.onPod(obj) },
			DeleteFunc: k.onPodDeleted,
		}},
		// What a pod reads changed: its workers look again.
		{core.ConfigMaps().Informer(), k.kickOnChange()},
		{core.Secrets().Informer(), k.kickOnChange()},
		{core.Services().Informer(), k.kickOnChange()},
		// The node's labels or taints changed: pods it did not fit may now.
		{core.Nodes().Informer(), cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, _ any) { k.scheduleAgain() },
		}},
		{core.PersistentVolumeClaims().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { k.kickNamespaceOf(obj) },
			DeleteFunc: k.onClaimDeleted,
		}},
	}
	if k.mesh != nil {
		// istiod watches Services too: their ports and selectors shape
		// what each proxy is pushed.
		push := func(any) { k.mesh.push() }
		handlers = append(handlers, struct {
			informer cache.SharedIndexInformer
			handler  cache.ResourceEventHandler
		}{core.Services().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: push, UpdateFunc: func(_, obj any) { push(obj) }, DeleteFunc: push}})
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return err
		}
	}
	k.factory.Start(k.ctx.Done())
	for typ, ok := range k.factory.WaitForCacheSync(k.ctx.Done()) {
		if !ok {
			return fmt.Errorf("loopback kubelet: the %v cache did not sync", typ)
		}
	}
	return nil
}

// stop ends every pod's processes at once, then the informers.
func (k *kubelet) stop() {
	if k.cancel == nil {
		return
	}
	k.cancel()
	k.wg.Wait()
	k.unmountClaims()
	if k.factory != nil {
		k.factory.Shutdown()
	}
}

func (k *kubelet) onPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if pod.Spec.NodeName == "" {
		if pod.DeletionTimestamp == nil {
			k.bind(pod)
		}
		return
	}
	if !k.runs(pod.Spec.NodeName) {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.finished[pod.UID] || k.ctx.Err() != nil {
		return
	}
	if w := k.workers[pod.UID]; w != nil {
		w.update(pod)
		return
	}
	w := newPodWorker(k, pod)
	k.workers[pod.UID] = w
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		w.loop(k.ctx)
	}()
}

func (k *kubelet) onPodDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	k.mu.Lock()
	w := k.workers[pod.UID]
	k.mu.Unlock()
	if w != nil {
		w.deleted()
	}
	k.placing.Lock()
	delete(k.placed, pod.UID)
	k.placing.Unlock()
}

// workerDone forgets a finished worker and wakes the pods of its namespace:
// a replacement may wait for the address it held.
func (k *kubelet) workerDone(w *podWorker) {
	k.mu.Lock()
	delete(k.workers, w.uid)
	k.finished[w.uid] = true
	k.mu.Unlock()
	k.kickNamespace(w.key.Namespace)
}

func (k *kubelet) kickOnChange() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    k.kickNamespaceOf,
		UpdateFunc: func(_, obj any) { k.kickNamespaceOf(obj) },
		DeleteFunc: k.kickNamespaceOf,
	}
}

func (k *kubelet) kickNamespaceOf(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		k.kickNamespace(o.GetNamespace())
	}
}

func (k *kubelet) kickNamespace(ns string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, w := range k.workers {
		if w.key.Namespace == ns {
			w.kick()
		}
	}
}

// onClaimDeleted removes the claim's filesystem: the data goes with the
// claim, as a dynamically provisioned volume would with policy Delete.
func (k *kubelet) onClaimDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	claim, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	k.logf("claim %s/%s deleted, removing its filesystem", claim.Namespace, claim.Name)
	k.removeClaim(claim)
}

// onWorker runs fn in the loop of the worker of pod ns/name.
func (k *kubelet) onWorker(ns, name string, fn func(*podWorker) error) error {
	k.mu.Lock()
	var target *podWorker
	for _, w := range k.workers {
		if w.key.Namespace == ns && w.key.Name == name {
			target = w
		}
	}
	k.mu.Unlock()
	if target == nil {
		return fmt.Errorf("no pod %s/%s runs on the loopback node", ns, name)
	}
	result := make(chan error, 1)
	if !target.send(k.ctx, func() { result <- fn(target) }) {
		return errNotRunning
	}
	return <-result
}

// signal sends sig to the nats process of the pod named ns/name.
func (k *kubelet) signal(ns, name string, sig syscall.Signal) error {
	return k.onWorker(ns, name, func(w *podWorker) error { return w.signalNats(sig) })
}

func (k *kubelet) configMap(ns, name string) (*corev1.ConfigMap, error) {
	return k.configMaps.ConfigMaps(ns).Get(name)
}

func (k *kubelet) secret(ns, name string) (*corev1.Secret, error) {
	return k.secrets.Secrets(ns).Get(name)
}

func (k *kubelet) podDir(pod *corev1.Pod) string {
	return filepath.Join(k.dir, "pods", pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

// logPath is where the pod's nats-server writes, every run appended; it
// outlives the pod, for the test that wants to know what happened.
func (k *kubelet) logPath(pod *corev1.Pod) string {
	return filepath.Join(k.dir, "logs", pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)+".log")
}

func (k *kubelet) claimDir(claim *corev1.PersistentVolumeClaim) string {
	return filepath.Join(k.dir, "claims", claim.Namespace+"_"+claim.Name+"_"+string(claim.UID))
}

func (k *kubelet) removePodDir(dir string) { _ = os.RemoveAll(dir) }

func (k *kubelet) logf(format string, args ...any) { k.log.printf(format, args...) }

// isHeadless reports whether ns has a headless Service of that name, which
// is what gives its pods DNS names.
func (k *kubelet) isHeadless(ns, name string) bool {
	svc, err := k.services.Services(ns).Get(name)
	return err == nil && svc.Spec.ClusterIP == corev1.ClusterIPNone
}
