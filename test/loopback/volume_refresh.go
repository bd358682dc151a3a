package loopback

import (
	"hash/fnv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A real kubelet does not rewrite a pod's ConfigMap and Secret volumes when
// the objects change: it refreshes them at the pod's next periodic sync
// (about a minute, with jitter) from its own cache of each object, so a
// running process sees a change tens of seconds late, and each pod at
// another time. Whatever reloads the process must cope with reading the old
// files first. The loopback kubelet keeps that lateness, shortened for test
// time: a pod's volumes are refreshed a per-pod delay after the kubelet saw
// the change, between DefaultConfigRefreshDelay and twice it (or
// Options.ConfigRefreshDelay). A pod's first files are written at once, as
// a real kubelet mounts them before it starts the containers.

// DefaultConfigRefreshDelay is the shortest refresh delay of a pod.
const DefaultConfigRefreshDelay = 2 * time.Second

// refreshDelay is the pod's own delay: base plus a share of base taken
// from its UID, so that the pods of one StatefulSet see a change at
// different times, the same each time.
func refreshDelay(base time.Duration, uid types.UID) time.Duration {
	h := fnv.New32a()
	h.Write([]byte(uid))
	return base + time.Duration(uint64(h.Sum32())%1000)*base/1000
}

// refreshDelays are the namespaces whose pods refresh their files after a
// delay of their own: one test can wait out a kubelet as late as a real
// one (a minute) without slowing every other.
type refreshDelays struct {
	mu   sync.Mutex
	byNS map[string]time.Duration
}

func (r *refreshDelays) set(ns string, base time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byNS == nil {
		r.byNS = map[string]time.Duration{}
	}
	r.byNS[ns] = base
}

// of is the shortest refresh delay of ns's pods, def unless ns has its own.
func (r *refreshDelays) of(ns string, def time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.byNS[ns]; ok {
		return d
	}
	return def
}

// SetConfigRefreshDelay gives the pods of namespace ns a refresh delay of
// their own in place of Options.ConfigRefreshDelay: each sees a change of
// its ConfigMap and Secret volumes between base and twice base after the
// kubelet saw it. A change already waiting keeps the time it was given.
func (c *Cluster) SetConfigRefreshDelay(ns string, base time.Duration) {
	c.kubelet.refreshDelays.set(ns, base)
}
