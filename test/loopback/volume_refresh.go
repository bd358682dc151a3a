package loopback

import (
	"hash/fnv"
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
