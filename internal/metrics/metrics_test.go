package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// controller-runtime registers its reconcile families when its
	// controller package is loaded, as the manager loads it.
	_ "sigs.k8s.io/controller-runtime/pkg/controller"
)

// TestControllerRuntimeServesWhatTheAlertsUse: each name of
// ControllerRuntime is taken in controller-runtime's registry, which a
// collector of the same name cannot join. Careless variant watched
// failing: a name controller-runtime does not have
// (controller_runtime_reconcile_failures_total) registers fine.
func TestControllerRuntimeServesWhatTheAlertsUse(t *testing.T) {
	for _, name := range ControllerRuntime {
		family := strings.TrimSuffix(name, "_bucket")
		probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: family, Help: "probe"})
		if err := crmetrics.Registry.Register(probe); err == nil {
			crmetrics.Registry.Unregister(probe)
			t.Errorf("controller-runtime does not serve %s", family)
		}
	}
}

// TestClusterGauges: a condition shows one series per status, the
// current one 1; a deleted cluster's series end.
func TestClusterGauges(t *testing.T) {
	s := NewClusters()
	s.Set("team-a", "orders", Cluster{
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}},
		Servers:    3, Ready: 2, Pending: 1, MeshStage: "Strict", Waiting: "RollingUpdate",
	})
	want := `
# HELP kubenats_natscluster_condition 1 for the status a condition of the NatsCluster has (True, False or Unknown), 0 for the others.
# TYPE kubenats_natscluster_condition gauge
kubenats_natscluster_condition{namespace="team-a",natscluster="orders",status="False",type="Ready"} 1
kubenats_natscluster_condition{namespace="team-a",natscluster="orders",status="True",type="Ready"} 0
kubenats_natscluster_condition{namespace="team-a",natscluster="orders",status="Unknown",type="Ready"} 0
# HELP kubenats_natscluster_servers_pending Servers a rollout or scale-down has yet to bring to the current revision.
# TYPE kubenats_natscluster_servers_pending gauge
kubenats_natscluster_servers_pending{namespace="team-a",natscluster="orders"} 1
# HELP kubenats_natscluster_waiting 1 while the NatsCluster is not Ready, labelled with what it waits for (the Ready condition's reason); no series when Ready.
# TYPE kubenats_natscluster_waiting gauge
kubenats_natscluster_waiting{namespace="team-a",natscluster="orders",reason="RollingUpdate"} 1
`
	if err := testutil.CollectAndCompare(s, strings.NewReader(want), ClusterCondition, ClusterPending, ClusterWaiting); err != nil {
		t.Fatal(err)
	}
	s.Set("team-a", "orders", Cluster{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}})
	if n := testutil.CollectAndCount(s, ClusterWaiting); n != 0 {
		t.Fatalf("%d waiting series for a Ready cluster", n)
	}
	s.Delete("team-a", "orders")
	if n := testutil.CollectAndCount(s); n != 0 {
		t.Fatalf("%d series after delete", n)
	}
}

// TestResourcesAreCounted: JetStream resources are counted by state, not
// served one series each. Careless variant watched failing: a series per
// resource name makes 1000 streams 1000 series.
func TestResourcesAreCounted(t *testing.T) {
	r := NewResources()
	for i := range 1000 {
		r.Set("Stream", "team-a", string(rune('a'+i%26))+strings.Repeat("x", i), "Ready")
	}
	r.Set("Stream", "team-a", "broken", "StreamNotFound")
	if n := testutil.CollectAndCount(r); n != 2 {
		t.Fatalf("%d series, want 2 (one per state)", n)
	}
}
