package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/kubectlplugin"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestStepDownAndEvacuationAskedThroughThePlugin: on four real servers,
// `kubectl kubenats stepdown NATSCLUSTER SERVER` (the plugin's own code,
// against the suite's API server) makes the operator hand the JetStream
// meta leadership to that server, and `kubectl kubenats evacuate
// NATSCLUSTER SERVER` moves every stream replica off the server, R1 and
// R3 alike; each request is then recorded in status.carried. Careless
// variants, run and seen failing: an evacuation that sends nothing (a
// stream kept its replica on the server); a step-down without the
// preferred server (the leadership went to nats-3, asked for nats-1; it
// lands on the asked server by chance once in three, and each of the
// three others is asked for in turn).
func TestStepDownAndEvacuationAskedThroughThePlugin(t *testing.T) {
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](4) })
	js := appJetStream(t, appConn(t, f, "requests", f.Pods...))
	var streams []string
	for i := range 6 {
		name := fmt.Sprintf("REQ%d", i)
		replicas := 1
		if i >= 4 {
			replicas = 3
		}
		createStream(t, js, natsjs.StreamConfig{Name: name, Subjects: []string{"req." + name}, Replicas: replicas})
		streams = append(streams, name)
	}

	// Handed to each other server in turn: a step-down that ignores the
	// preference lands on the asked server by chance once in three.
	first := metaLeaderOf(t, f, f.Pods)
	leader := first
	for _, to := range f.Pods {
		if to == leader {
			continue
		}
		if err := kubectlplugin.RequestStepDown(testCtx(t), cluster.Client, f.NS, f.Cluster.Name, to, time.Now()); err != nil {
			t.Fatal(err)
		}
		eventually(t, wait, func() error {
			if now := metaLeaderOf(t, f, f.Pods); now != to {
				return fmt.Errorf("meta leader %s, asked to hand over from %s to %s", now, leader, to)
			}
			return nil
		})
		carried(t, f, func(c *v1alpha1.CarriedRequests) string { return c.StepDown }, v1alpha1.AnnotationStepDown)
		eventually(t, wait, func() error {
			c := f.Cluster.DeepCopy()
			get(t, c)
			if c.Status.MetaLeader != to {
				return fmt.Errorf("status.metaLeader %q, want %s", c.Status.MetaLeader, to)
			}
			return nil
		})
		leader = to
	}

	victim := busiest(t, js, streams)
	if err := kubectlplugin.RequestEvacuation(testCtx(t), cluster.Client, f.NS, f.Cluster.Name, victim, time.Now()); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		for _, name := range streams {
			peers, err := streamPeersOf(js, name)
			if err != nil {
				return err
			}
			if slices.Contains(peers, victim) {
				return fmt.Errorf("stream %s still has a replica on %s: %v", name, victim, peers)
			}
		}
		return nil
	})
	carried(t, f, func(c *v1alpha1.CarriedRequests) string { return c.Evacuate }, v1alpha1.AnnotationEvacuate)
	t.Logf("meta leadership handed from %s to each other server in turn; every replica moved off %s", first, victim)
}

// metaLeaderOf is the JetStream meta leader as the first of servers that
// answers reports it.
func metaLeaderOf(t *testing.T, f *formed, servers []string) string {
	t.Helper()
	var leader string
	eventually(t, wait, func() error {
		for _, s := range servers {
			var v e2ekit.MetaView
			if err := e2ekit.Monitor(f.IP(s), "/jsz", &v); err == nil && v.Meta != nil && v.Meta.Leader != "" {
				leader = v.Meta.Leader
				return nil
			}
		}
		return fmt.Errorf("no server names a meta leader")
	})
	return leader
}

// streamPeersOf are the servers holding a stream's replicas.
func streamPeersOf(js natsjs.JetStream, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return nil, fmt.Errorf("stream %s has no leader yet", name)
	}
	peers := []string{info.Cluster.Leader}
	for _, r := range info.Cluster.Replicas {
		peers = append(peers, r.Name)
	}
	return peers, nil
}

// busiest is the server holding the most replicas of streams.
func busiest(t *testing.T, js natsjs.JetStream, streams []string) string {
	t.Helper()
	count := map[string]int{}
	for _, name := range streams {
		peers, err := streamPeersOf(js, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range peers {
			count[p]++
		}
	}
	best := ""
	for s, n := range count {
		if best == "" || n > count[best] || n == count[best] && s < best {
			best = s
		}
	}
	return best
}

// carried waits for status.carried to record the request annotation's
// value.
func carried(t *testing.T, f *formed, field func(*v1alpha1.CarriedRequests) string, annotation string) {
	t.Helper()
	eventually(t, wait, func() error {
		c := f.Cluster.DeepCopy()
		get(t, c)
		asked := c.Annotations[annotation]
		if c.Status.Carried == nil || field(c.Status.Carried) != asked {
			return fmt.Errorf("status.carried %+v, want %s's %q", c.Status.Carried, annotation, asked)
		}
		return nil
	})
}
