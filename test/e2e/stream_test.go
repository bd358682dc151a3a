package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// messageCount is how many messages scenario 2 pushes through.
const messageCount = 10_000

// heavyTimeout bounds a step that moves all of those messages.
const heavyTimeout = 3 * time.Minute

// TestStreamAndConsumerThroughOperator: an R3 file Stream and a durable pull
// Consumer declared as resources are created on a 3-server cluster by the
// operator, reach the NatsCluster through its internal Service name, and
// carry 10,000 messages published with acknowledgements and consumed with
// explicit acks, every count exact on the server.
func TestStreamAndConsumerThroughOperator(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "orders")

	stream := &v1alpha1.Stream{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"},
		Spec: v1alpha1.StreamSpec{
			Target:   v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: f.Cluster.Name}},
			Name:     "ORDERS",
			Subjects: []string{"orders.>"},
			Replicas: 3,
			Storage:  "file",
		},
	}
	consumer := &v1alpha1.Consumer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fulfilment"},
		Spec: v1alpha1.ConsumerSpec{
			Target:      v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: f.Cluster.Name}},
			StreamName:  "ORDERS",
			DurableName: "fulfilment",
			AckPolicy:   "explicit",
		},
	}
	began := time.Now()
	// Both at once, as `kubectl apply -f dir/` would: the consumer waits for
	// its stream by itself.
	for _, obj := range []v1alpha1.JetStreamObject{stream, consumer} {
		if err := cluster.Client.Create(testCtx(t), obj); err != nil {
			t.Fatal(err)
		}
	}
	waitSynced(t, stream, formTimeout)
	waitSynced(t, consumer, formTimeout)
	t.Logf("Stream and Consumer Synced %.2fs after creation; stream leader %s", time.Since(began).Seconds(), leaderOf(stream.Status.Cluster))

	nc := appConn(t, f, "e2e-orders", f.Pods...)
	js := appJetStream(t, nc)
	checkServerStream(t, js)

	ctx, cancel := context.WithTimeout(testCtx(t), heavyTimeout)
	defer cancel()
	published := publishAll(ctx, t, nc, "ORDERS", "orders", messageCount)
	info, err := js.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if msgs := info.CachedInfo().State.Msgs; msgs != messageCount {
		t.Fatalf("stream state msgs = %d after %d acknowledged publishes, want %d", msgs, published, messageCount)
	}
	consumeAll(ctx, t, js, messageCount)
	checkConsumerDone(t, js, messageCount)
}

// checkServerStream: the stream the operator made is what the resource
// says, and its three replicas are placed and current.
func checkServerStream(t *testing.T, js natsjs.JetStream) {
	t.Helper()
	eventually(t, wait, func() error {
		s, err := js.Stream(testCtx(t), "ORDERS")
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Config.Replicas != 3 || info.Config.Storage != natsjs.FileStorage {
			return fmt.Errorf("server stream has %d replicas on %v, want 3 on file", info.Config.Replicas, info.Config.Storage)
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream has no leader yet: %+v", info.Cluster)
		}
		current := 0
		for _, p := range info.Cluster.Replicas {
			if p.Current && !p.Offline {
				current++
			}
		}
		if current != 2 {
			return fmt.Errorf("leader %s, %d current followers, want 2: %+v", info.Cluster.Leader, current, info.Cluster.Replicas)
		}
		return nil
	})
}

// consumeAll fetches every message through the durable consumer, checks
// each is one published and none comes twice, and acks it.
func consumeAll(ctx context.Context, t *testing.T, js natsjs.JetStream, n int) {
	t.Helper()
	cons, err := js.Consumer(ctx, "ORDERS", "fulfilment")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := cons.CachedInfo().Config; cfg.Durable != "fulfilment" || cfg.AckPolicy != natsjs.AckExplicitPolicy || cfg.DeliverSubject != "" {
		t.Fatalf("server consumer: durable %q, ack policy %v, deliver subject %q; want a durable pull consumer with explicit acks", cfg.Durable, cfg.AckPolicy, cfg.DeliverSubject)
	}
	began := time.Now()
	seen := map[uint64]bool{}
	// Every published message once. Not necessarily at the sequence of its
	// publishing order: an asynchronous publish that met no responders
	// while the stream's subject spread over the routes is retried after
	// later ones.
	unseen := map[string]bool{}
	for i := range n {
		unseen[string(messagePayload(i))] = true
	}
	for len(seen) < n {
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d messages: %v", len(seen), n, ctx.Err())
		}
		batch, err := cons.Fetch(500, natsjs.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatalf("fetching after %d messages: %v", len(seen), err)
		}
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			if !unseen[string(msg.Data())] {
				t.Fatalf("stream sequence %d holds %q: not published, or delivered twice", md.Sequence.Stream, msg.Data())
			}
			delete(unseen, string(msg.Data()))
			seen[md.Sequence.Stream] = true
			if err := msg.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Error(); err != nil {
			t.Fatalf("fetch after %d messages: %v", len(seen), err)
		}
	}
	d := time.Since(began)
	t.Logf("consumed and acked %d messages through the durable consumer in %.2fs (%.0f msg/s)", n, d.Seconds(), float64(n)/d.Seconds())
}

// checkConsumerDone: the server's own counts, once the last acks (sent
// without waiting for a reply) have reached the consumer's leader.
func checkConsumerDone(t *testing.T, js natsjs.JetStream, n int) {
	t.Helper()
	want := uint64(n)
	eventually(t, wait, func() error {
		cons, err := js.Consumer(testCtx(t), "ORDERS", "fulfilment")
		if err != nil {
			return err
		}
		ci := cons.CachedInfo()
		if ci.NumAckPending != 0 || ci.NumPending != 0 || ci.Delivered.Consumer != want ||
			ci.Delivered.Stream != want || ci.AckFloor.Stream != want || ci.NumRedelivered != 0 {
			return fmt.Errorf("consumer: ack pending %d, pending %d, delivered %d (stream seq %d), ack floor %d, redelivered %d; want 0, 0, %d (%d), %d, 0",
				ci.NumAckPending, ci.NumPending, ci.Delivered.Consumer, ci.Delivered.Stream, ci.AckFloor.Stream, ci.NumRedelivered, n, n, n)
		}
		return nil
	})
}

// leaderOf names the leader in a Raft group status, for logs.
func leaderOf(g *v1alpha1.RaftGroupStatus) string {
	if g == nil {
		return "(none reported)"
	}
	return g.Leader
}
