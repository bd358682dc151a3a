package netpol_test

import (
	"testing"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestTopologyPortsTruthTable: who reaches the leafnode port 7422 and the
// gateway port 7222 of demo's servers. The leafnode port admits
// spec.leafnodes.accept.from and nobody else (not even with nobody
// listed); the gateway port admits the servers of the member named by
// clusterRef (in its namespace, with kubenats' labels), the peers of
// spec.gateway.from, and neither a namesake's pods elsewhere nor a pod of
// the member's namespace that is not its server.
//
// Careless variants watched failing: a rule without from for an unlisted
// leafnode port (everyone reaches 7422: "west's server -> leafnodes:
// allowed true"); the member peer with the pod selector alone (which then
// selects pods of demo's own namespace: west's server is shut out of
// 7222).
func TestTopologyPortsTruthTable(t *testing.T) {
	west, westLabels := ns("west")
	random, randomLabels := ns("random")
	serverLabels := labels("app.kubernetes.io/name", "nats", "app.kubernetes.io/instance", "west", "app.kubernetes.io/managed-by", "kubenats")
	member := pod("west's server", "10.0.7.1", west, westLabels, serverLabels)
	namesake := pod("a pod labelled as west's server in a random namespace", "10.0.4.2", random, randomLabels, serverLabels)
	neighbour := pod("another pod of west's namespace", "10.0.7.9", west, westLabels, labels("app", "other"))
	edge := external("an edge site in 203.0.113.0/24", "203.0.113.7")
	far := external("a far member at 198.51.100.4", "198.51.100.4")
	stranger := external("an address elsewhere", "192.0.2.1")

	for _, tc := range []struct {
		name     string
		leafFrom []v1alpha1.NetworkPolicyPeer
		want     map[string]map[string]bool // port name -> source -> allowed
	}{
		{"leafnodes from nobody", nil, map[string]map[string]bool{
			"leafnodes": {edge.name: false, stranger.name: false, member.name: false},
		}},
		{"leafnodes from the edge", []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24"}}}, map[string]map[string]bool{
			"leafnodes": {edge.name: true, stranger.name: false, member.name: false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := natsCluster("demo", &v1alpha1.NetworkPolicySpec{Enabled: true})
			c.Spec.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{From: tc.leafFrom}}
			c.Spec.Gateway = &v1alpha1.GatewaySpec{
				SecretRef: v1alpha1.LocalSecretRef{Name: "gw"}, TLS: v1alpha1.GatewayTLSSpec{SecretName: "gw-tls"},
				Gateways: []v1alpha1.GatewayRemote{
					{Name: "west", ClusterRef: &v1alpha1.GatewayClusterRef{Name: "west", Namespace: "west"}},
					{Name: "far", URLs: []string{"nats://198.51.100.4:7222"}},
				},
				From: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "198.51.100.4/32"}}},
			}
			demo := renderCluster(t, c, "10.0.1.1")
			eval := matcher.BuildNetworkPolicies(false, []*networkingv1.NetworkPolicy{demo.policy})
			want := tc.want
			want["gateway"] = map[string]bool{member.name: true, far.name: true, namesake.name: false, neighbour.name: false, stranger.name: false, edge.name: false}
			for portName, cells := range want {
				for _, who := range []source{member, namesake, neighbour, edge, far, stranger} {
					w, ok := cells[who.name]
					if !ok {
						continue
					}
					if got := allowed(eval, who, demo, portName); got != w {
						t.Errorf("%s -> %s: allowed %v, want %v", who.name, portName, got, w)
					}
				}
			}
		})
	}
}
