package accountcontroller

import (
	"bytes"
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Revocations go first. An account's pass that carries one (a user or the
// account being deleted, a creds Secret changed or deleted, whose old key
// is revoked) is queued at revocationPriority, ahead of every resync and
// spec change (priority 0) of every namespace: a revoked user's
// credentials stop working within a pass's time, not after the queue.
// controller-runtime's priority queue (the default) takes the highest
// priority first, and keeps an item's priority when it runs again (a pass
// the namespace share sent back, a push that failed); revocationsFirst
// sets it anew after each pass, so that an account is not ahead for ever
// once its revocation is carried.
const revocationPriority = 100

// enqueue adds reqs to q, at revocationPriority when first.
func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], first bool, reqs []reconcile.Request) {
	pq, isPriority := q.(priorityqueue.PriorityQueue[reconcile.Request])
	for _, req := range reqs {
		if first && isPriority {
			pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(revocationPriority)}, req)
		} else {
			q.Add(req)
		}
	}
}

// revocationAware maps an event's object to requests with toRequests, at
// revocationPriority when revokes says the event carries a revocation
// (its old object nil for a create, its new one nil for a delete).
func revocationAware(toRequests handler.MapFunc, revokes func(old, new client.Object) bool) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, revokes(nil, e.Object), toRequests(ctx, e.Object))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, revokes(e.ObjectOld, e.ObjectNew), toRequests(ctx, e.ObjectNew))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, revokes(e.Object, nil), toRequests(ctx, e.Object))
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, false, toRequests(ctx, e.Object))
		},
	}
}

// deletionRevokes: a user or an account whose deletion starts (or that is
// gone) has its keys revoked by the pass.
func deletionRevokes(old, new client.Object) bool {
	switch {
	case new == nil:
		return true
	case old == nil:
		return !new.GetDeletionTimestamp().IsZero()
	}
	return old.GetDeletionTimestamp().IsZero() && !new.GetDeletionTimestamp().IsZero()
}

// credsRevoke: a creds Secret deleted, or whose content changed, gets its
// user a new key and the old one revoked (whoever changed it may hold the
// old creds). A Secret the operator creates revokes nothing.
func credsRevoke(old, new client.Object) bool {
	switch {
	case new == nil:
		return true
	case old == nil:
		return false
	}
	o, okOld := old.(*corev1.Secret)
	n, okNew := new.(*corev1.Secret)
	return !okOld || !okNew || !maps.EqualFunc(o.Data, n.Data, bytes.Equal)
}

// self maps an object to its own request.
func self(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// revocationsFirst runs the account reconciler and sets the priority its
// account runs at next: revocationPriority while a revocation is still to
// carry (the account or one of its users being deleted), the default
// otherwise.
type revocationsFirst struct{ r *Reconciler }

func (f revocationsFirst) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := f.r.Reconcile(ctx, req)
	res.Priority = ptr.To(f.priority(ctx, req))
	return res, err
}

// priority is the priority req runs at next, from the cache.
func (f revocationsFirst) priority(ctx context.Context, req reconcile.Request) int {
	var a v1alpha1.NatsAccount
	if err := f.r.Get(ctx, req.NamespacedName, &a); err == nil && !a.DeletionTimestamp.IsZero() {
		return revocationPriority
	}
	users, err := f.r.usersOf(ctx, req.Namespace, req.Name)
	if err != nil {
		return 0
	}
	return passPriority(users)
}

// passPriority is revocationPriority when one of users is being deleted.
func passPriority(users []*v1alpha1.NatsUser) int {
	for _, u := range users {
		if !u.DeletionTimestamp.IsZero() {
			return revocationPriority
		}
	}
	return 0
}
