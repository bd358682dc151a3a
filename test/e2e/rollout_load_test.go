package e2e_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// The load a rollout test runs under, and what it checks afterwards.

// worker works off a durable pull consumer, acknowledging each message,
// so that the consumer's Raft group has work throughout.
type worker struct {
	cons natsjs.Consumer
	stop chan struct{}
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	n    int
}

func (w *worker) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		batch, err := w.cons.Fetch(100, natsjs.FetchMaxWait(time.Second))
		if err != nil {
			time.Sleep(50 * time.Millisecond) // a server is restarting: try again
			continue
		}
		for m := range batch.Messages() {
			if m.Ack() == nil {
				w.mu.Lock()
				w.n++
				w.mu.Unlock()
			}
		}
	}
}

func (w *worker) halt() {
	w.once.Do(func() {
		close(w.stop)
		<-w.done
	})
}

func (w *worker) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// readyOnVersion waits for Ready with every server on version.
func readyOnVersion(t *testing.T, f *formed, version string) {
	t.Helper()
	c := f.Cluster
	eventually(t, upgradeTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) ||
			c.Status.ServerVersion != version || c.Status.ServerVersionSource != v1alpha1.VersionObserved {
			return fmt.Errorf("version %s (%s), Ready %+v", c.Status.ServerVersion, c.Status.ServerVersionSource,
				meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady))
		}
		for _, p := range f.Pods {
			var v varz
			if err := monitor(f.IP(p), "/varz", &v); err != nil || v.Version != version {
				return fmt.Errorf("%s runs %q (%v)", p, v.Version, err)
			}
		}
		return nil
	})
}

// storedCount is e2ekit.StoredCount for stream of the application
// account, a "no responders" explained.
func storedCount(t *testing.T, js natsjs.JetStream, stream natsjs.Stream, acked int) int {
	t.Helper()
	return e2ekit.StoredCount(t, js, stream.CachedInfo().Config.Name, acked, explainIn(js))
}

// consumerCaughtUp: the consumer delivered and saw acknowledged every
// stored message (the worker is stopped, so a straggler is fetched here),
// and its three replicas are current.
func consumerCaughtUp(t *testing.T, cons natsjs.Consumer, stored int) {
	t.Helper()
	eventually(t, wait, func() error {
		if batch, err := cons.Fetch(500, natsjs.FetchMaxWait(time.Second)); err == nil {
			for m := range batch.Messages() {
				_ = m.Ack()
			}
		}
		info, err := cons.Info(testCtx(t))
		if err != nil {
			return err
		}
		if info.AckFloor.Stream != uint64(stored) || info.NumPending != 0 || info.NumAckPending != 0 {
			return fmt.Errorf("consumer ack floor %d of %d, %d pending, %d awaiting ack", info.AckFloor.Stream, stored, info.NumPending, info.NumAckPending)
		}
		if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("consumer cluster %+v, want a leader and 2 replicas", info.Cluster)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Offline {
				return fmt.Errorf("consumer replica %+v", r)
			}
		}
		return nil
	})
}
