package e2e_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

const (
	olderVersion   = "2.14.10"
	upgradeTimeout = 5 * time.Minute
)

// publisher publishes with message IDs until stopped, retrying each ID
// until the stream acknowledges it, and remembers every acknowledged ID and
// the longest time between two acknowledgements.
type publisher struct {
	js natsjs.JetStream
	// subject is where it publishes; upgrade.msg when empty.
	subject string
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	acked   int
	stall   time.Duration
}

// startPublishing connects to f's servers as its application user,
// creates the R3 stream UPGRADE and starts a publisher on it.
func startPublishing(t *testing.T, f *formed, opts ...nats.Option) (*publisher, natsjs.JetStream, natsjs.Stream) {
	t.Helper()
	cred := credentials(t, f)
	nc, err := nats.Connect(podURLs(f, f.Pods), append([]nats.Option{nats.UserInfo(cred["user"], cred["password"]), clusterDNS(),
		nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var stream natsjs.Stream
	// Placement may fail right after Ready, until every peer is known.
	eventually(t, wait, func() error {
		stream, err = js.CreateStream(testCtx(t), natsjs.StreamConfig{Name: "UPGRADE", Subjects: []string{"upgrade.>"}, Replicas: 3})
		return err
	})
	pub := &publisher{js: js, stop: make(chan struct{}), done: make(chan struct{})}
	go pub.run()
	return pub, js, stream
}

func (p *publisher) run() {
	defer close(p.done)
	last, subject := time.Now(), p.subject
	if subject == "" {
		subject = "upgrade.msg"
	}
	for id := 0; ; id++ {
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := p.js.Publish(ctx, subject, []byte(strconv.Itoa(id)), natsjs.WithMsgID(strconv.Itoa(id)))
			cancel()
			if err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // a server is restarting: try again
		}
		now := time.Now()
		p.mu.Lock()
		p.acked = id + 1
		p.stall = max(p.stall, now.Sub(last))
		p.mu.Unlock()
		last = now
	}
}

// TestRollingUpgradeKeepsEveryAcknowledgedMessage upgrades a 3-server
// cluster from the older version to the default one while a client keeps
// publishing to an R3 stream. The operator replaces one server at a time,
// each once every Raft group is settled; afterwards every acknowledged
// message is in the stream and every server runs the new version.
func TestRollingUpgradeKeepsEveryAcknowledgedMessage(t *testing.T) {
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Version = olderVersion })
	pub, js, stream := startPublishing(t, f)
	defer pub.halt()
	eventually(t, wait, func() error {
		pub.mu.Lock()
		defer pub.mu.Unlock()
		if pub.acked < 100 {
			return fmt.Errorf("%d messages acknowledged before the upgrade", pub.acked)
		}
		return nil
	})

	pods := recordPods(t, f.NS)
	pods.seen(t, f.Pods)
	started := time.Now()
	c := f.Cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Spec.Version = "2.15.3"
		return cluster.Client.Update(testCtx(t), c)
	})
	eventually(t, upgradeTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) ||
			c.Status.ServerVersion != "2.15.3" || c.Status.ServerVersionSource != v1alpha1.VersionObserved {
			ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
			return fmt.Errorf("version %s (%s), Ready %+v", c.Status.ServerVersion, c.Status.ServerVersionSource, ready)
		}
		for _, p := range f.Pods {
			var v struct {
				Version string `json:"version"`
			}
			if err := monitor(f.IP(p), "/varz", &v); err != nil || v.Version != "2.15.3" {
				return fmt.Errorf("%s runs %q (%v)", p, v.Version, err)
			}
		}
		return nil
	})
	upgraded := time.Since(started)

	pub.halt()
	acked, stall := pub.result()

	stored := storedCount(t, js, stream, acked)
	checkEveryIDStored(t, js, acked, stored)
	// One replacement per server, counted from the pods (distinct UIDs),
	// not from RollingUpdate events: the recorder folds a repeat into one
	// Event, so an operator that replaced a server twice would pass a
	// count of events.
	for _, pod := range f.Pods {
		if n := len(pods.uids(pod)); n != 2 {
			t.Errorf("%s has had %d pods during the upgrade, want exactly one replacement (2)", pod, n)
		}
	}
	t.Logf("upgrade %s -> 2.15.3: %s; %d messages acknowledged, none lost; longest publish stall %s",
		olderVersion, upgraded.Round(time.Millisecond), acked, stall.Round(time.Millisecond))
}

// checkEveryIDStored reads the stored messages back in order and finds
// every acknowledged ID exactly once (and at most the one in flight). A
// read that fails half way (the client is still reconnecting after the
// last restart) starts over.
func checkEveryIDStored(t *testing.T, js natsjs.JetStream, acked, stored int) {
	t.Helper()
	checkEveryIDStoredIn(t, js, "UPGRADE", acked, stored)
}

// checkEveryIDStoredIn is checkEveryIDStored for the named stream.
//
// One ordered consumer reads the whole stream through its Messages
// iterator. Reading it by Fetch, as this did before, made a new consumer
// for every batch (nats.go resets an ordered consumer at each Fetch) and
// pulled from it at once: from a server other than the consumer's, the
// pull can arrive before the consumer's interest does (the interest
// travels over the application account's route, the reply to the create
// over the system account's own), and the server answers "no responders".
// With some 150 batches a read, one lost race in any of them failed the
// whole read, again at every retry: the "no responders for 30 s after
// Ready" of the operator-death and mesh tests, a race of this reader and
// not of the operator (the failing runs showed the client's server
// holding its routes' subscriptions and a fresh consumer per batch on the
// other servers). The iterator keeps one consumer and, should a pull meet
// no responders, makes it again itself.
func checkEveryIDStoredIn(t *testing.T, js natsjs.JetStream, stream string, acked, stored int) {
	t.Helper()
	eventually(t, wait, func() error {
		cons, err := js.OrderedConsumer(testCtx(t), stream, natsjs.OrderedConsumerConfig{})
		if err != nil {
			return withServerView(err, js.Conn(), "APP", "$JS.API.CONSUMER.CREATE."+stream)
		}
		it, err := cons.Messages()
		if err != nil {
			return withServerView(err, js.Conn(), "APP", "$JS.API.CONSUMER.MSG.NEXT."+stream+".>")
		}
		defer it.Stop()
		seen := make([]bool, acked+1)
		for n := 0; n < stored; n++ {
			m, err := it.Next(natsjs.NextMaxWait(5 * time.Second))
			if err != nil {
				return fmt.Errorf("read %d of %d messages, then: %w", n, stored, withServerView(err, js.Conn(), "APP", "$JS.API.CONSUMER.MSG.NEXT."+stream+".>"))
			}
			id, err := strconv.Atoi(m.Headers().Get(nats.MsgIdHdr))
			if err != nil || id < 0 || id > acked || seen[id] {
				t.Fatalf("message %q (id header %q): unexpected or duplicate", m.Data(), m.Headers().Get(nats.MsgIdHdr))
			}
			seen[id] = true
		}
		for id := range acked {
			if !seen[id] {
				t.Fatalf("acknowledged message %d is not in the stream", id)
			}
		}
		return nil
	})
}

// listEvents lists the events in ns.
// expectWarningEvent fails t unless ns holds a Warning event of reason.
func expectWarningEvent(t *testing.T, ns, reason string) {
	t.Helper()
	found := false
	for _, e := range listEvents(t, ns) {
		if e.Reason == reason && e.Type == corev1.EventTypeWarning {
			found = true
			t.Logf("event: %s", e.Note)
		}
	}
	if !found {
		t.Errorf("no Warning event %s", reason)
	}
}

func listEvents(t *testing.T, ns string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := cluster.Client.List(testCtx(t), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}
