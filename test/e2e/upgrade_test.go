package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

const (
	olderVersion   = "2.14.10"
	upgradeTimeout = 5 * time.Minute
)

// startPublishing connects to f's servers as its application user,
// creates the R3 stream UPGRADE and starts a publisher on it.
func startPublishing(t *testing.T, f *formed, opts ...nats.Option) (*e2ekit.Publisher, natsjs.JetStream, natsjs.Stream) {
	t.Helper()
	cred := credentials(t, f)
	nc, err := nats.Connect(podURLs(f, f.Pods), append([]nats.Option{nats.UserInfo(cred["user"], cred["password"]), clusterDNS(), e2ekit.ClusterTLS(t, cred),
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
	return e2ekit.StartPublisher(js, "upgrade.msg"), js, stream
}

// TestRollingUpgradeKeepsEveryAcknowledgedMessage upgrades a 3-server
// cluster from the older version to the default one while a client keeps
// publishing to an R3 stream. The operator replaces one server at a time,
// each once every Raft group is settled; afterwards every acknowledged
// message is in the stream and every server runs the new version.
func TestRollingUpgradeKeepsEveryAcknowledgedMessage(t *testing.T) {
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Version = olderVersion })
	pub, js, stream := startPublishing(t, f)
	defer pub.Halt()
	eventually(t, wait, func() error {
		if n := pub.Count(); n < 100 {
			return fmt.Errorf("%d messages acknowledged before the upgrade", n)
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

	pub.Halt()
	acked, stall := pub.Result()

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

// checkEveryIDStoredIn is e2ekit.CheckEveryIDStored for the named
// stream of the application account, a "no responders" explained.
func checkEveryIDStoredIn(t *testing.T, js natsjs.JetStream, stream string, acked, stored int) {
	t.Helper()
	e2ekit.CheckEveryIDStored(t, js, stream, acked, stored, explainIn(js))
}

// explainIn explains a JetStream error of js's application account by
// what the servers know (withServerView).
func explainIn(js natsjs.JetStream) e2ekit.Explain {
	return func(err error, subject string) error { return withServerView(err, js.Conn(), "APP", subject) }
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
