package jetstreamcontroller

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// writtenStatuses remembers the status each resource was last given by this
// operator, for its generation. Right after a status write the cache often
// still holds the resource as it was (the watch event is on its way); a pass
// woken meanwhile would compare with that stale status, write the same
// status again and lose the race to its own first write. Comparing with
// what was written instead skips the write.
type writtenStatuses struct {
	m sync.Map // types.NamespacedName -> *writtenStatus
}

type writtenStatus struct {
	uid        types.UID
	generation int64
	status     v1alpha1.JetStreamStatus
}

// current is the status to compare a pass's result with: the cached one,
// or the one last written when the cache has not caught up with it yet.
// A status changed by someone else within the same generation also reads
// as not caught up; the next change of the resource's own sets it right.
func (w *writtenStatuses) current(obj v1alpha1.JetStreamObject) v1alpha1.JetStreamStatus {
	cached := *obj.GetJetStreamStatus().DeepCopy()
	v, ok := w.m.Load(client.ObjectKeyFromObject(obj))
	if !ok {
		return cached
	}
	last := v.(*writtenStatus)
	if last.uid != obj.GetUID() || last.generation != obj.GetGeneration() || equality.Semantic.DeepEqual(last.status, cached) {
		// The cache has caught up, or the write no longer concerns this
		// resource: the copy is let go (at 10,000 resources the copies
		// were megabytes held for nothing).
		w.m.CompareAndDelete(client.ObjectKeyFromObject(obj), v)
		return cached
	}
	return *last.status.DeepCopy()
}

func (w *writtenStatuses) wrote(obj v1alpha1.JetStreamObject) {
	w.m.Store(client.ObjectKeyFromObject(obj), &writtenStatus{uid: obj.GetUID(), generation: obj.GetGeneration(), status: *obj.GetJetStreamStatus().DeepCopy()})
}

// forget drops a resource that is gone.
func (w *writtenStatuses) forget(name types.NamespacedName) { w.m.Delete(name) }
