package namespaceshare

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

func TestNamespaceShare(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		workers, perNamespace int
		want                  int
	}{
		{"default: a quarter of the shipped 16", 16, 0, 4},
		{"default never below one", 3, 0, 1},
		{"one worker: the one", 1, 0, 1},
		{"asked for", 16, 2, 2},
		{"asked for more than there are: every worker", 4, 10, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := namespaceShare(tc.workers, tc.perNamespace); got != tc.want {
				t.Errorf("namespaceShare(%d, %d) = %d, want %d", tc.workers, tc.perNamespace, got, tc.want)
			}
		})
	}
}

// TestNamespacePassesHoldTheShare: a namespace at its share is refused
// until one of its passes ends, another namespace is not, and ending a
// pass twice frees one slot, not two.
func TestNamespacePassesHoldTheShare(t *testing.T) {
	var p namespacePasses
	done1, ok := p.take("a", 2)
	if !ok {
		t.Fatal("the first pass of a was refused")
	}
	if _, ok := p.take("a", 2); !ok {
		t.Fatal("the second pass of a was refused under a share of two")
	}
	if _, ok := p.take("a", 2); ok {
		t.Fatal("a third pass of a ran under a share of two")
	}
	doneB, ok := p.take("b", 2)
	if !ok {
		t.Fatal("namespace b was refused while only a was at its share")
	}
	doneB()
	done1()
	done1()
	if _, ok := p.take("a", 2); !ok {
		t.Fatal("a pass of a was refused after one of its passes ended")
	}
	if _, ok := p.take("a", 2); ok {
		t.Fatal("ending one pass twice freed two slots")
	}
}

// blockingReconciler blocks the passes of namespace silent until release
// is closed, counting those under way, and reports each pass of any other
// namespace on done.
type blockingReconciler struct {
	release chan struct{}
	done    chan string
	mu      sync.Mutex
	running int
}

func (b *blockingReconciler) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Namespace != "silent" {
		b.done <- req.String()
		return reconcile.Result{}, nil
	}
	b.mu.Lock()
	b.running++
	b.mu.Unlock()
	<-b.release
	b.mu.Lock()
	b.running--
	b.mu.Unlock()
	return reconcile.Result{}, nil
}

func (b *blockingReconciler) underWay() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running
}

// TestShareByNamespaceLetsAnotherNamespaceThrough: a controller of four
// workers, as controller-runtime runs it (its priority queue), gets eight
// passes of a namespace whose servers never answer (they block until the
// test ends) and, after them in the queue, one pass of another namespace.
// That pass completes while the silent namespace's passes still block,
// and by then the silent namespace holds its whole share (one worker) and
// no more. Careless variant (the controller built with the reconciler
// itself, not Share, as the account and JetStream controllers
// were): the first four silent passes take every worker and the other
// namespace's pass never runs (the test fails after its bound).
func TestShareByNamespaceLetsAnotherNamespaceThrough(t *testing.T) {
	b := &blockingReconciler{release: make(chan struct{}), done: make(chan string, 1)}
	t.Cleanup(func() { close(b.release) })
	const workers = 4
	c, err := controller.NewTypedUnmanaged("share-test", controller.TypedOptions[reconcile.Request]{
		MaxConcurrentReconciles: workers,
		Reconciler:              Share(b, workers, 0),
		SkipNameValidation:      ptr.To(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		for i := range 8 {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "silent", Name: fmt.Sprint("c", i)}})
		}
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "other", Name: "revoke"}})
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	select {
	case got := <-b.done:
		if got != "other/revoke" {
			t.Fatalf("ran %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the other namespace's pass did not run while %d silent passes held the workers", b.underWay())
	}
	// The silent namespace holds its whole share and, over a window that
	// sees its refused passes come back (namespaceBusyRetry), no more.
	share := namespaceShare(workers, 0)
	deadline := time.Now().Add(10 * time.Second)
	for b.underWay() < share && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for end := time.Now().Add(namespaceBusyRetry + 500*time.Millisecond); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if n := b.underWay(); n != share {
			t.Fatalf("%d silent passes under way, want the namespace's share, %d", n, share)
		}
	}
}
