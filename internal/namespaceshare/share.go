// Package namespaceshare keeps one namespace's objects to a share of a
// controller's workers.
package namespaceshare

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// One namespace's objects hold at most a share of a controller's workers
// at once: the NatsClusters', the JetStream kinds', the NatsAccounts'. A
// pass that waits on servers that do not answer holds its worker for up to
// the answer bound per read (a dial, a push, a JetStream call), and a
// tenant can make as many such objects as it likes: without a share,
// enough of them in one namespace take every worker and every other
// namespace's objects wait in the queue behind them (a revocation for
// minutes). A pass over the share does not wait for a slot (that would
// hold the worker all the same): it gives the worker back at once and runs
// again shortly, at the priority it had.

// namespaceBusyRetry is how soon a pass that found its namespace at its
// share runs again.
const namespaceBusyRetry = time.Second

// namespaceShare returns how many passes one namespace may run at once,
// with workers workers and perNamespace asked for (0: the default). The
// default is a quarter of the workers, at least one: a namespace that
// hangs every one of its clusters still leaves three quarters to the
// others. Asked for more than there are workers means every worker.
func namespaceShare(workers, perNamespace int) int {
	if perNamespace > 0 {
		return min(perNamespace, workers)
	}
	return max(1, workers/4)
}

// namespacePasses counts the passes under way per namespace.
type namespacePasses struct {
	mu       sync.Mutex
	inFlight map[string]int
}

// take starts a pass of namespace ns if fewer than limit of its passes
// are under way, and returns the function that ends it; ok is false when
// the namespace is at its share.
func (p *namespacePasses) take(ns string, limit int) (done func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inFlight == nil {
		p.inFlight = map[string]int{}
	}
	if p.inFlight[ns] >= limit {
		return nil, false
	}
	p.inFlight[ns]++
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.inFlight[ns]--; p.inFlight[ns] <= 0 {
				delete(p.inFlight, ns)
			}
		})
	}, true
}

// Share runs inner with at most namespaceShare(workers,
// perNamespace) passes of one namespace at once: the one implementation
// every controller is built with (SetupWithManager), around its
// reconciler. workers must be the controller's MaxConcurrentReconciles.
func Share(inner reconcile.Reconciler, workers, perNamespace int) reconcile.Reconciler {
	return &namespaceShared{inner: inner, limit: namespaceShare(workers, perNamespace)}
}

type namespaceShared struct {
	inner  reconcile.Reconciler
	limit  int
	passes namespacePasses
}

func (s *namespaceShared) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	done, ok := s.passes.take(req.Namespace, s.limit)
	if !ok {
		return reconcile.Result{RequeueAfter: namespaceBusyRetry}, nil
	}
	defer done()
	return s.inner.Reconcile(ctx, req)
}
