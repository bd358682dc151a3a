package e2e_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// formed is a NatsCluster that reached Ready, and where its servers are.
type formed struct {
	ns      string
	cluster *v1alpha1.NatsCluster
	pods    []string
}

func (f *formed) ip(pod string) string { return cluster.PodIP(f.ns, pod) }

// formCluster creates a 3-server NatsCluster in a new namespace, waits for
// it to report Ready, and logs how long each step took.
func formCluster(t *testing.T, edits ...func(*v1alpha1.NatsClusterSpec)) *formed {
	t.Helper()
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	tl := watchTimeline(t, ns)
	c := natsCluster(ns, "nats", edits...)
	tl.begin()
	if err := cluster.Client.Create(testCtx(t), c); err != nil {
		t.Fatal(err)
	}
	// The clock starts before the create call, which has been seen to take
	// seconds on a busy machine: the timeline shows when it returned.
	tl.mark("NatsCluster create call returned")
	eventually(t, formTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if c.Status.Phase != v1alpha1.PhaseReady || ready == nil || ready.Status != metav1.ConditionTrue {
			return fmt.Errorf("phase %q, Ready condition %+v", c.Status.Phase, ready)
		}
		return nil
	})
	// The watch that times it may trail this poll by a moment.
	eventually(t, wait, func() error {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		if tl.clusterReady.IsZero() {
			return fmt.Errorf("the timeline has not seen the NatsCluster Ready yet")
		}
		return nil
	})
	tl.report(t)
	t.Logf("status at first Ready: version %s (%s), %d/%d ready, endpoint %+v",
		c.Status.ServerVersion, c.Status.ServerVersionSource, c.Status.ReadyReplicas, c.Status.Replicas, c.Status.Endpoint)
	return &formed{ns: ns, cluster: c, pods: podNames(c.Name, 3)}
}

// TestClusterForms: a 3-server NatsCluster with JetStream becomes a real
// cluster (full mesh of routes, a JetStream meta leader with 3 peers),
// reports it truthfully, and admits exactly the clients with its
// credentials, in auth mode users (the default) and token.
func TestClusterForms(t *testing.T) {
	t.Run("users", func(t *testing.T) {
		f := formCluster(t)
		checkStatus(t, f)
		checkRoutes(t, f)
		checkMetaGroup(t, f)
		checkUsersClients(t, f)
	})
	t.Run("token", func(t *testing.T) {
		f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Auth.Mode = v1alpha1.AuthToken })
		checkStatus(t, f)
		checkRoutes(t, f)
		checkMetaGroup(t, f)
		checkTokenClients(t, f)
	})
}

// checkStatus: the version the servers run, as they report it, and the
// internal endpoint.
func checkStatus(t *testing.T, f *formed) {
	t.Helper()
	c := f.cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if c.Status.ServerVersion != v1alpha1.DefaultVersion || c.Status.ServerVersionSource != v1alpha1.VersionObserved {
			return fmt.Errorf("serverVersion %q (%s), want %s (Observed)", c.Status.ServerVersion, c.Status.ServerVersionSource, v1alpha1.DefaultVersion)
		}
		return nil
	})
	if want := "nats://nats." + f.ns + ".svc:4222"; c.Status.Endpoint.Internal != want {
		t.Errorf("status.endpoint.internal = %q, want %q", c.Status.Endpoint.Internal, want)
	}
	if c.Status.ReadyReplicas != 3 || c.Status.Replicas != 3 {
		t.Errorf("status replicas %d, ready %d; want 3 and 3", c.Status.Replicas, c.Status.ReadyReplicas)
	}
	for _, pod := range f.pods {
		var v varz
		if err := monitor(f.ip(pod), "/varz", &v); err != nil {
			t.Fatal(err)
		}
		if v.Version != v1alpha1.DefaultVersion || v.ServerName != pod {
			t.Errorf("%s: /varz says server %q version %q; want server name %q (from the pod name) and %s", pod, v.ServerName, v.Version, pod, v1alpha1.DefaultVersion)
		}
	}
}

// checkRoutes: every server has routes to exactly the two others. With
// route pooling (2.10+) a pair of servers has several route connections
// (the pool, plus one pinned to the system account), so num_routes counts
// connections, not peers: the peers are the distinct remote names.
func checkRoutes(t *testing.T, f *formed) {
	t.Helper()
	for _, pod := range f.pods {
		others := slices.DeleteFunc(slices.Clone(f.pods), func(p string) bool { return p == pod })
		var last routez
		eventually(t, wait, func() error {
			var r routez
			if err := monitor(f.ip(pod), "/routez", &r); err != nil {
				return err
			}
			last = r
			peers := map[string]bool{}
			for _, route := range r.Routes {
				peers[route.RemoteName] = true
			}
			got := make([]string, 0, len(peers))
			for p := range peers {
				got = append(got, p)
			}
			sort.Strings(got)
			if !slices.Equal(got, others) || r.NumRoutes != len(r.Routes) || r.NumRoutes < 2 {
				return fmt.Errorf("%s: routes to %v (num_routes %d, %d listed), want routes to %v", pod, got, r.NumRoutes, len(r.Routes), others)
			}
			return nil
		})
		pinned := map[string]int{}
		for _, route := range last.Routes {
			if route.Account != "" {
				pinned[route.Account]++
			}
		}
		t.Logf("%s: num_routes %d to %d peers (pinned to an account: %v; the rest pooled)", pod, last.NumRoutes, len(others), pinned)
	}
}

// checkMetaGroup: the JetStream meta group has one leader all servers
// agree on, and 3 peers, the two followers current.
func checkMetaGroup(t *testing.T, f *formed) {
	t.Helper()
	eventually(t, wait, func() error {
		leaders := map[string]bool{}
		for _, pod := range f.pods {
			var j jsz
			if err := monitor(f.ip(pod), "/jsz", &j); err != nil {
				return err
			}
			if j.Meta == nil || j.Meta.Leader == "" || j.Meta.Size != 3 {
				return fmt.Errorf("%s: meta group %+v, want a leader and cluster_size 3", pod, j.Meta)
			}
			leaders[j.Meta.Leader] = true
		}
		if len(leaders) != 1 {
			return fmt.Errorf("servers disagree on the meta leader: %v", leaders)
		}
		var leader string
		for l := range leaders {
			leader = l
		}
		if !slices.Contains(f.pods, leader) {
			return fmt.Errorf("meta leader %q is not one of %v", leader, f.pods)
		}
		var j jsz
		if err := monitor(f.ip(leader), "/jsz", &j); err != nil {
			return err
		}
		var current []string
		for _, r := range j.Meta.Replicas {
			if r.Current && !r.Offline {
				current = append(current, r.Name)
			}
		}
		if len(current) != 2 {
			return fmt.Errorf("leader %s sees current followers %v, want the 2 others", leader, current)
		}
		t.Logf("meta leader %s, followers %v current", leader, current)
		return nil
	})
}

// roundTripTimeout bounds one message's trip through the cluster.
const roundTripTimeout = 2 * time.Second
