package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// scaleDownScene is a 5-server cluster about to be scaled to 3, set up so
// that a scale-down has everything to do: R1 and R3 streams, each with a
// durable consumer that has delivered and acknowledged messages, sit on
// both servers that go (seen, not hoped for), a publisher with message IDs
// writes to every stream, and the meta leader is the first server to go.
// Its recorders watch the pods, the system account's requests and the
// meta leader from then on, and take each deleted server's own view of
// what it holds as its pod's termination begins.
type scaleDownScene struct {
	f        *formed
	staying  []string
	leaving  []string // in the order they go: highest first
	js       natsjs.JetStream
	streams  []string
	groups   []raftGroup
	pubs     map[string]*e2ekit.Publisher
	before   map[string]*natsjs.ConsumerInfo // each stream's consumer, as the scale-down found it
	pods     *podHistory
	requests *systemRequests
	leaders  *metaLeaders
	views    *deletionViews
}

// consumerName is every stream's durable consumer.
const consumerName = "W"

func setUpScaleDown(t *testing.T) *scaleDownScene {
	t.Helper()
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To(int32(5)) })
	five := podNames(f.Cluster.Name, 5)
	f.Pods = five
	metaGroupOf(t, f, five)
	sc := &scaleDownScene{f: f, staying: five[:3], leaving: []string{five[4], five[3]},
		pubs: map[string]*e2ekit.Publisher{}, before: map[string]*natsjs.ConsumerInfo{}}
	nc := clientConn(t, f, five)
	sc.js = appJetStream(t, nc)
	sampler := clientConn(t, f, sc.staying)
	for _, replicas := range []int{3, 1} {
		sc.placeStreams(t, sampler, replicas)
	}
	for _, name := range sc.streams {
		sc.groups = append(sc.groups, raftGroup{stream: name}, raftGroup{stream: name, consumer: consumerName})
	}
	// A consumer goes where its stream is; seen, all the same.
	for _, server := range sc.leaving {
		found := false
		for _, g := range sc.groups {
			peers, _, err := peersOf(sampler, g)
			if err != nil {
				t.Fatal(err)
			}
			found = found || (g.consumer != "" && slices.Contains(peers, server))
		}
		if !found {
			t.Fatalf("no consumer sits on %s", server)
		}
	}
	for _, name := range sc.streams {
		p := e2ekit.StartPublisher(sc.js, name+".msg")
		t.Cleanup(p.Halt)
		sc.pubs[name] = p
	}
	eventually(t, wait, func() error {
		for name, p := range sc.pubs {
			if n := p.Count(); n < 50 {
				return fmt.Errorf("%d messages acknowledged by %s", n, name)
			}
		}
		return nil
	})
	for _, name := range sc.streams {
		sc.before[name] = consumeSome(t, sc.js, name)
	}

	sys := systemConn(t, f, sc.staying)
	moveMetaLeader(t, f, sys, sc.leaving[0])
	sc.pods = recordPods(t, f.NS)
	sc.pods.seen(t, five)
	sc.requests = recordSystemRequests(t, sys, scaleDownSubjects...)
	sc.leaders = watchMetaLeader(t, f, sc.staying)
	sc.views = recordDeletionViews(t, f.NS)
	// What the deletion views will be judged against: each leaving server
	// says it holds something now.
	for _, server := range sc.leaving {
		h, err := readOwnHoldings(f.IP(server))
		if err != nil {
			t.Fatalf("%s's own view before the scale-down: %v", server, err)
		}
		if len(h.groups) == 0 {
			t.Fatalf("before the scale-down %s says it holds nothing", server)
		}
		t.Logf("before the scale-down %s holds %v", server, h.groups)
	}
	eventually(t, wait, func() error {
		if l := sc.leaders.before(time.Now()); l != sc.leaving[0] {
			return fmt.Errorf("meta leader %q before the scale-down, want %s", l, sc.leaving[0])
		}
		return nil
	})
	return sc
}

// placeStreams creates streams of the given replicas until every leaving
// server holds one, keeping only those that land on one; it fails if
// placement never puts one there.
func (sc *scaleDownScene) placeStreams(t *testing.T, nc *nats.Conn, replicas int) {
	t.Helper()
	uncovered := slices.Clone(sc.leaving)
	var misses []string
	for i := 0; i < 12 && len(uncovered) > 0; i++ {
		name := fmt.Sprintf("R%d_%d", replicas, i)
		cfg := natsjs.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Replicas: replicas, Storage: natsjs.FileStorage}
		// New servers take placements a moment after they join.
		eventually(t, wait, func() error {
			_, err := sc.js.CreateStream(testCtx(t), cfg)
			return err
		})
		peers, _, err := peersOf(nc, raftGroup{stream: name})
		if err != nil {
			t.Fatal(err)
		}
		hit := slices.DeleteFunc(slices.Clone(uncovered), func(s string) bool { return !slices.Contains(peers, s) })
		if len(hit) == 0 {
			// Kept until the end: placement prefers the servers with the
			// fewest streams, so it takes a miss to go elsewhere.
			misses = append(misses, name)
			continue
		}
		uncovered = slices.DeleteFunc(uncovered, func(s string) bool { return slices.Contains(hit, s) })
		_, err = sc.js.CreateOrUpdateConsumer(testCtx(t), name, natsjs.ConsumerConfig{
			Durable: consumerName, AckPolicy: natsjs.AckExplicitPolicy, AckWait: 10 * time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		sc.streams = append(sc.streams, name)
		t.Logf("stream %s (R%d) on %v", name, replicas, peers)
	}
	if len(uncovered) > 0 {
		t.Fatalf("placement put no R%d stream on %v in 12 tries", replicas, uncovered)
	}
	for _, name := range misses {
		if err := sc.js.DeleteStream(testCtx(t), name); err != nil {
			t.Fatal(err)
		}
	}
}

// consumeSome has the stream's consumer deliver 20 messages and
// acknowledges the first 15 (confirmed by the server): state that a
// scale-down must keep, an ack floor with deliveries beyond it.
func consumeSome(t *testing.T, js natsjs.JetStream, stream string) *natsjs.ConsumerInfo {
	t.Helper()
	cons, err := js.Consumer(testCtx(t), stream, consumerName)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(20, natsjs.FetchMaxWait(wait))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if n < 15 {
			ctx, cancel := context.WithTimeout(testCtx(t), wait)
			err := m.DoubleAck(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
		n++
	}
	if n != 20 {
		t.Fatalf("consumer of %s delivered %d messages, want 20 (%v)", stream, n, batch.Error())
	}
	info, err := cons.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// moveMetaLeader makes server the meta leader, by step-downs with it
// preferred, until it is.
func moveMetaLeader(t *testing.T, f *formed, sys *nats.Conn, server string) {
	t.Helper()
	req := fmt.Appendf(nil, `{"placement":{"preferred":%q}}`, server)
	eventually(t, wait, func() error {
		var j jsz
		if err := monitor(f.IP(server), "/jsz", &j); err == nil && j.Meta != nil && j.Meta.Leader == server {
			return nil
		}
		if _, err := sys.Request(stepDownSubject, req, 5*time.Second); err != nil {
			return err
		}
		return fmt.Errorf("meta leader is not %s yet", server)
	})
}
