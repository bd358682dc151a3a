package netpol_test

import (
	"testing"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestMonitoringPortsWithoutNetworkPolicy: a cluster without
// spec.networkPolicy, judged by the evaluator. Its monitor port 8222 is
// reached by the operator (as dist/install.yaml runs it) alone, its
// metrics port 7777 by the pods of its own namespace or the Prometheus
// spec.monitoring.from names; a pod of another namespace reaches neither,
// and still reaches the client and route ports, a leafnode listener and a
// port no container declares (a mesh sidecar's, 15090), over TCP as over
// UDP. Careless variants run: a policy with the monitor and metrics rules
// alone (every other port closed: "the operator -> nats 4222: allowed
// false"), and the ports one by one without the ranges ("the operator ->
// TCP 15090 (no container declares it): allowed false"). Without any
// policy (the code before) renderCluster finds none to judge.
func TestMonitoringPortsWithoutNetworkPolicy(t *testing.T) {
	monitoring, monitoringLabels := ns("monitoring")
	random, randomLabels := ns("random")
	_, apps := ns(clusterNamespace)
	operator := operatorPod(t)
	prom := pod("a Prometheus in the monitoring namespace", "10.0.5.1", monitoring, monitoringLabels, labels("app", "prometheus"))
	local := pod("a pod of the cluster's namespace", "10.0.1.9", clusterNamespace, apps, labels("app", "web"))
	stranger := pod("a pod in a random namespace", "10.0.4.1", random, randomLabels, labels("app", "web"))
	outside := external("an address outside the cluster", "203.0.113.7")

	for _, tc := range []struct {
		name string
		from []v1alpha1.NetworkPolicyPeer
		// metrics: who reaches 7777
		metrics map[string]bool
	}{
		{"default", nil, map[string]bool{local.name: true}},
		{"a listed Prometheus", []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: selector(corev1.LabelMetadataName, "monitoring")}},
			map[string]bool{prom.name: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := natsCluster("demo", nil)
			c.Spec.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true, From: tc.from}
			c.Spec.Auth.Mode = v1alpha1.AuthUsers
			c.Spec.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}}
			demo := renderCluster(t, c, "10.0.1.1")
			eval := matcher.BuildNetworkPolicies(false, []*networkingv1.NetworkPolicy{demo.policy})
			for _, who := range []source{operator, prom, local, stranger, outside} {
				for _, port := range []string{"nats", "cluster", "leafnodes"} {
					if !allowed(eval, who, demo, port) {
						t.Errorf("%s -> %s %d: allowed false, want true (open as without a policy)", who.name, port, demo.ports[port])
					}
				}
				if got, want := allowed(eval, who, demo, "monitor"), who.name == operator.name; got != want {
					t.Errorf("%s -> monitor 8222: allowed %v, want %v", who.name, got, want)
				}
				if got, want := allowed(eval, who, demo, "metrics"), tc.metrics[who.name]; got != want {
					t.Errorf("%s -> metrics 7777: allowed %v, want %v", who.name, got, want)
				}
				for _, p := range []struct {
					port  int
					proto corev1.Protocol
				}{{15090, corev1.ProtocolTCP}, {53, corev1.ProtocolUDP}} {
					src, dst := who.peer, demo.server.peer
					if !eval.IsTrafficAllowed(&matcher.Traffic{Source: &src, Destination: &dst, ResolvedPort: p.port, Protocol: p.proto}).IsAllowed() {
						t.Errorf("%s -> %s %d (no container declares it): allowed false, want true", who.name, p.proto, p.port)
					}
				}
			}
		})
	}
}
