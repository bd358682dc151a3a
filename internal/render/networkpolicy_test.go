package render_test

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// The meaning of the policy (who reaches which port) is tested against a
// real policy evaluator in test/netpol; these tests hold its shape.

func withNetworkPolicy(p v1alpha1.NetworkPolicySpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.NetworkPolicy = &p }
}

func labelSelector(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func policyOf(t *testing.T, c *v1alpha1.NatsCluster) *networkingv1.NetworkPolicy {
	t.Helper()
	return find[*networkingv1.NetworkPolicy](t, renderObjects(t, c, render.Inputs{}), c.Name)
}

// TestNetworkPolicyOnlyWhenEnabled: the full policy only when enabled,
// in place of the monitoring ports' policy (monitoring_ports_policy_test.go)
// that guards a cluster without it.
func TestNetworkPolicyOnlyWhenEnabled(t *testing.T) {
	base := renderObjects(t, cluster(), render.Inputs{})
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want int
	}{
		{"unset", cluster(), 0},
		{"peers listed but not enabled", cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{
			Clients: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: labelSelector("team", "a")}},
		})), 0},
		{"enabled", cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true})), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderObjects(t, tc.in, render.Inputs{})
			full, ports := 0, 0
			for _, o := range objs {
				if np, ok := o.(*networkingv1.NetworkPolicy); ok {
					switch np.Name {
					case tc.in.NetworkPolicyName():
						full++
					case tc.in.MonitoringPortsPolicyName():
						ports++
					}
				}
			}
			equal(t, "NetworkPolicies", full, tc.want)
			equal(t, "monitoring ports' policies", ports, 1-tc.want)
			equal(t, "NetworkPolicies in all", count[*networkingv1.NetworkPolicy](objs), 1)
			if _, first := objs[0].(*networkingv1.NetworkPolicy); !first {
				t.Errorf("first object is %T, want the NetworkPolicy: it must be in place before the servers start", objs[0])
			}
			equal(t, "objects", len(objs), len(base))
		})
	}
}

// TestNetworkPolicySelectsTheServersForIngress: the policy covers exactly
// the cluster's pods and denies every ingress it does not list.
func TestNetworkPolicySelectsTheServersForIngress(t *testing.T) {
	c := cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true}))
	np := policyOf(t, c)
	equal(t, "apiVersion", np.APIVersion, "networking.k8s.io/v1")
	equal(t, "kind", np.Kind, "NetworkPolicy")
	equal(t, "name", np.Name, c.NetworkPolicyName())
	if !maps.Equal(np.Spec.PodSelector.MatchLabels, render.ManagedSelectorLabels(c)) || len(np.Spec.PodSelector.MatchExpressions) != 0 {
		t.Errorf("podSelector = %+v, want the servers' selector %v", np.Spec.PodSelector, render.ManagedSelectorLabels(c))
	}
	if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes = %v, want [Ingress] (egress stays open)", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Egress) != 0 {
		t.Errorf("egress rules = %v, want none", np.Spec.Egress)
	}
}

// TestNetworkPolicyPortsAreTheContainerPorts: each rule names one TCP port,
// the number of the nats container's port of that role.
func TestNetworkPolicyPortsAreTheContainerPorts(t *testing.T) {
	c := cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true}))
	containerPorts := map[string]int32{}
	for _, p := range serverContainerOf(t, c).Ports {
		containerPorts[p.Name] = p.ContainerPort
	}
	var got []int32
	for i, rule := range policyOf(t, c).Spec.Ingress {
		if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Protocol == nil {
			t.Fatalf("rule %d ports = %+v, want one port with a protocol", i, rule.Ports)
		}
		p := rule.Ports[0]
		equal(t, "protocol", *p.Protocol, corev1.ProtocolTCP)
		if p.EndPort != nil {
			t.Errorf("rule %d has endPort %d, want a single port", i, *p.EndPort)
		}
		got = append(got, p.Port.IntVal)
	}
	want := []int32{containerPorts["nats"], containerPorts["cluster"], containerPorts["monitor"]}
	if !reflect.DeepEqual(got, want) || want[0] != render.ClientPort || want[1] != render.ClusterPort || want[2] != render.MonitorPort {
		t.Errorf("rule ports = %v, want client, route, monitor = %v", got, want)
	}
}

// ruleFor returns the one ingress rule of np for port.
func ruleFor(t *testing.T, np *networkingv1.NetworkPolicy, port int32) networkingv1.NetworkPolicyIngressRule {
	t.Helper()
	for _, r := range np.Spec.Ingress {
		if len(r.Ports) == 1 && r.Ports[0].Port != nil && r.Ports[0].Port.IntVal == port {
			return r
		}
	}
	t.Fatalf("no ingress rule for port %d", port)
	return networkingv1.NetworkPolicyIngressRule{}
}

func TestNetworkPolicyOperatorPeer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		operator v1alpha1.OperatorPeer
		wantNS   string
		wantPods map[string]string
	}{
		{"defaults: dist/install.yaml's Deployment", v1alpha1.OperatorPeer{}, "kubenats-system", map[string]string{"app.kubernetes.io/name": "kubenats"}},
		{"elsewhere", v1alpha1.OperatorPeer{Namespace: "platform", PodLabels: map[string]string{"app": "ops", "tier": "control"}},
			"platform", map[string]string{"app": "ops", "tier": "control"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := policyOf(t, cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true, Operator: tc.operator})))
			want := networkingv1.NetworkPolicyPeer{
				NamespaceSelector: labelSelector("kubernetes.io/metadata.name", tc.wantNS),
				PodSelector:       &metav1.LabelSelector{MatchLabels: tc.wantPods},
			}
			for _, port := range []int32{render.ClientPort, render.MonitorPort} {
				from := ruleFor(t, np, port).From
				if len(from) == 0 || !reflect.DeepEqual(from[0], want) {
					t.Errorf("port %d: first peer = %+v, want the operator %+v", port, from, want)
				}
			}
			for _, p := range ruleFor(t, np, render.ClusterPort).From {
				if reflect.DeepEqual(p, want) {
					t.Errorf("the operator may reach the route port")
				}
			}
		})
	}
}

// TestNetworkPolicyPeersKeepTheirOrder: the user's peers follow the
// operator's own (the operator; on the client port its backup Jobs too),
// in the order written (the output is byte-stable).
func TestNetworkPolicyPeersKeepTheirOrder(t *testing.T) {
	clients := []v1alpha1.NetworkPolicyPeer{
		{NamespaceSelector: labelSelector("team", "b")},
		{PodSelector: labelSelector("app", "web")},
		{NamespaceSelector: labelSelector("team", "a"), PodSelector: labelSelector("role", "api")},
		{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24", Except: []v1alpha1.CIDR{"203.0.113.128/25"}}},
	}
	monitoring := []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: labelSelector("kubernetes.io/metadata.name", "monitoring")}}
	np := policyOf(t, cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true, Clients: clients, Monitoring: monitoring})))
	check := func(port int32, ours int, want []v1alpha1.NetworkPolicyPeer) {
		from := ruleFor(t, np, port).From
		if len(from) != len(want)+ours {
			t.Fatalf("port %d: %d peers, want the operator's %d and %d", port, len(from), ours, len(want))
		}
		for i, w := range want {
			got := from[i+ours]
			if !reflect.DeepEqual(got.NamespaceSelector, w.NamespaceSelector) || !reflect.DeepEqual(got.PodSelector, w.PodSelector) ||
				(w.IPBlock == nil) != (got.IPBlock == nil) || w.IPBlock != nil && (got.IPBlock.CIDR != string(w.IPBlock.CIDR) || !reflect.DeepEqual(got.IPBlock.Except, asStrings(w.IPBlock.Except))) {
				t.Errorf("port %d peer %d = %+v, want %+v", port, i+ours, got, w)
			}
		}
	}
	check(render.ClientPort, 2, clients)
	check(render.MonitorPort, 1, monitoring)
}

func asStrings[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

// TestNetworkPolicyDoesNotShareMemoryWithTheSpec: changing the rendered
// policy leaves the NatsCluster alone.
func TestNetworkPolicyDoesNotShareMemoryWithTheSpec(t *testing.T) {
	c := cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{
		Enabled:  true,
		Clients:  []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: labelSelector("team", "a")}, {IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8", Except: []v1alpha1.CIDR{"10.1.0.0/16"}}}},
		Operator: v1alpha1.OperatorPeer{PodLabels: map[string]string{"app": "ops"}},
	}))
	before := c.DeepCopy()
	np := policyOf(t, c)
	for _, r := range np.Spec.Ingress {
		for _, p := range r.From {
			for _, s := range []*metav1.LabelSelector{p.NamespaceSelector, p.PodSelector} {
				if s != nil {
					for k := range s.MatchLabels {
						s.MatchLabels[k] = "mutated"
					}
				}
			}
			if p.IPBlock != nil {
				p.IPBlock.Except[0] = "mutated"
			}
		}
	}
	if !reflect.DeepEqual(before, c) {
		t.Errorf("the rendered policy shares memory with the spec")
	}
}

// TestNetworkPolicyRefusesWhatTheAPIServerWould: selectors and blocks that
// a NetworkPolicy cannot hold are errors naming the field, from Objects too
// (`kubenats render` has no API server to refuse them).
func TestNetworkPolicyRefusesWhatTheAPIServerWould(t *testing.T) {
	expr := func(op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: op, Values: values}}}
	}
	for _, tc := range []struct {
		name string
		spec v1alpha1.NetworkPolicySpec
		want string
	}{
		{"unknown operator", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{PodSelector: expr("Equals", "a")}}},
			"spec.networkPolicy.clients[0].podSelector"},
		{"In without values", v1alpha1.NetworkPolicySpec{Monitoring: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: expr(metav1.LabelSelectorOpIn)}}},
			"spec.networkPolicy.monitoring[0].namespaceSelector"},
		{"Exists with values", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: labelSelector("team", "a")}, {PodSelector: expr(metav1.LabelSelectorOpExists, "a")}}},
			"spec.networkPolicy.clients[1].podSelector"},
		{"bad label key", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: labelSelector("bad key!", "a")}}},
			"spec.networkPolicy.clients[0].namespaceSelector"},
		{"bad label value", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{PodSelector: labelSelector("team", "a b")}}},
			"spec.networkPolicy.clients[0].podSelector"},
		{"empty peer", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{}}},
			"spec.networkPolicy.clients[0]: a peer needs"},
		{"ipBlock with a selector", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{
			PodSelector: labelSelector("app", "web"), IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8"}}}},
			"spec.networkPolicy.clients[0]: ipBlock cannot"},
		{"not a CIDR", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.1"}}}},
			"spec.networkPolicy.clients[0].ipBlock.cidr"},
		{"except outside the CIDR", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/16", Except: []v1alpha1.CIDR{"10.1.0.0/24"}}}}},
			"spec.networkPolicy.clients[0].ipBlock.except"},
		{"except equal to the CIDR", v1alpha1.NetworkPolicySpec{Clients: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/16", Except: []v1alpha1.CIDR{"10.0.0.0/16"}}}}},
			"spec.networkPolicy.clients[0].ipBlock.except"},
		{"operator namespace not a DNS label", v1alpha1.NetworkPolicySpec{Operator: v1alpha1.OperatorPeer{Namespace: "Kube_Nats"}},
			"spec.networkPolicy.operator.namespace"},
		{"operator label value", v1alpha1.NetworkPolicySpec{Operator: v1alpha1.OperatorPeer{PodLabels: map[string]string{"app": "-x-"}}},
			"spec.networkPolicy.operator.podLabels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Enabled = true
			objs, err := objectsNoPanic(t, cluster(withNetworkPolicy(tc.spec)))
			if err == nil {
				t.Fatalf("Objects accepted the policy")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
			if objs != nil {
				t.Errorf("Objects returned %d objects with its error", len(objs))
			}
		})
	}
}
