package netpol_test

import (
	"testing"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestMetricsPortTruthTable: who reaches the metrics port 7777 of demo's
// servers, by default (its own namespace's pods) and with a Prometheus
// listed in spec.monitoring.from (that namespace only). Careless variant
// watched failing: a rule without from admits the random namespace.
func TestMetricsPortTruthTable(t *testing.T) {
	monitoring, monitoringLabels := ns("monitoring")
	random, randomLabels := ns("random")
	_, apps := ns(clusterNamespace)
	prom := pod("a Prometheus in the monitoring namespace", "10.0.5.1", monitoring, monitoringLabels, labels("app", "prometheus"))
	local := pod("a pod of the cluster's namespace", "10.0.1.9", clusterNamespace, apps, labels("app", "prometheus"))
	stranger := pod("a pod in a random namespace", "10.0.4.1", random, randomLabels, labels("app", "prometheus"))
	for _, tc := range []struct {
		name string
		from []v1alpha1.NetworkPolicyPeer
		want map[string]bool
	}{
		{"default", nil, map[string]bool{prom.name: false, local.name: true, stranger.name: false}},
		{"a listed Prometheus", []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: selector(corev1.LabelMetadataName, "monitoring")}},
			map[string]bool{prom.name: true, local.name: false, stranger.name: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := natsCluster("demo", &v1alpha1.NetworkPolicySpec{Enabled: true})
			c.Spec.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true, From: tc.from}
			demo := renderCluster(t, c, "10.0.1.1")
			eval := matcher.BuildNetworkPolicies(false, []*networkingv1.NetworkPolicy{demo.policy})
			for _, who := range []source{prom, local, stranger} {
				if got := allowed(eval, who, demo, "metrics"); got != tc.want[who.name] {
					t.Errorf("%s -> 7777: allowed %v, want %v", who.name, got, tc.want[who.name])
				}
			}
		})
	}
}
