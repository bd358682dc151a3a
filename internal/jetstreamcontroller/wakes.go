package jetstreamcontroller

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Wakes hands the pool's advisory wake-ups to one kind's work queue. None
// is dropped, however many come at once: the queue holds each resource
// once however often it is woken, so what it holds is bounded by the
// number of resources, not by the rate of the news. (A bounded channel in
// between dropped wake-ups under load, leaving the drift they told of to
// the periodic resync.)
type Wakes struct {
	queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
}

// Wake queues the resource namespace/name after delay. Until the kind's
// controller has started it does nothing: its start looks at every
// resource anyway.
func (w *Wakes) Wake(namespace, name string, delay time.Duration) {
	if q := w.queue.Load(); q != nil {
		(*q).AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}, delay)
	}
}

// source is the controller's watch that hands Wakes its queue.
func (w *Wakes) source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.queue.Store(&q)
		return nil
	})
}
