package controller

import (
	"sync"
	"time"
)

// One namespace's clusters hold at most a share of the NatsCluster
// workers at once. A pass that waits on servers that do not answer holds
// its worker for up to the answer bound per read, and a tenant can make
// as many such clusters as it likes: without a share, enough hung clusters
// in one namespace take every worker and every other namespace's clusters
// wait in the queue behind them. A pass over the share does not wait for a
// slot (that would hold the worker all the same): it gives the worker back
// at once and runs again shortly.

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
