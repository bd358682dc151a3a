package e2e_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

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
	c := f.Cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if c.Status.ServerVersion != v1alpha1.DefaultVersion || c.Status.ServerVersionSource != v1alpha1.VersionObserved {
			return fmt.Errorf("serverVersion %q (%s), want %s (Observed)", c.Status.ServerVersion, c.Status.ServerVersionSource, v1alpha1.DefaultVersion)
		}
		return nil
	})
	if want := "tls://nats." + f.NS + ".svc:4222"; c.Status.Endpoint.Internal != want {
		t.Errorf("status.endpoint.internal = %q, want %q", c.Status.Endpoint.Internal, want)
	}
	if c.Status.ReadyReplicas != 3 || c.Status.Replicas != 3 {
		t.Errorf("status replicas %d, ready %d; want 3 and 3", c.Status.Replicas, c.Status.ReadyReplicas)
	}
	for _, pod := range f.Pods {
		var v varz
		if err := monitor(f.IP(pod), "/varz", &v); err != nil {
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
	for _, pod := range f.Pods {
		others := slices.DeleteFunc(slices.Clone(f.Pods), func(p string) bool { return p == pod })
		var last routez
		eventually(t, wait, func() error {
			var r routez
			if err := monitor(f.IP(pod), "/routez", &r); err != nil {
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
		for _, pod := range f.Pods {
			var j jsz
			if err := monitor(f.IP(pod), "/jsz", &j); err != nil {
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
		if !slices.Contains(f.Pods, leader) {
			return fmt.Errorf("meta leader %q is not one of %v", leader, f.Pods)
		}
		var j jsz
		if err := monitor(f.IP(leader), "/jsz", &j); err != nil {
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
