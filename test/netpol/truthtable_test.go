package netpol_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// portNames are the nats container's ports, in the table's column order:
// clients 4222, routes 6222, monitoring 8222.
var portNames = [3]string{"nats", "cluster", "monitor"}

// row is who connects and whether each port admits them.
type row struct {
	who  source
	want [3]bool
}

var (
	allowNone     = [3]bool{false, false, false}
	allowClient   = [3]bool{true, false, false}
	allowRoute    = [3]bool{false, true, false}
	allowMonitor  = [3]bool{false, false, true}
	allowOperator = [3]bool{true, false, true}
)

func selector(kv ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: labels(kv...)}
}

// world is one NatsCluster "demo" with a policy, another NatsCluster
// "other" with the same policy in the same namespace, and who connects to
// demo's servers.
type world struct {
	demo, other rendered
	rows        []row
}

// mismatches evaluates every row on every port with policies in force and
// lists the cells where the evaluator disagrees with the table.
func (w world) mismatches(policies ...*networkingv1.NetworkPolicy) []string {
	eval := matcher.BuildNetworkPolicies(false, policies)
	var out []string
	for _, r := range w.rows {
		for i, name := range portNames {
			if got := allowed(eval, r.who, w.demo, name); got != r.want[i] {
				out = append(out, fmt.Sprintf("%s -> port %d (%s): allowed %v, want %v",
					r.who.name, w.demo.ports[name], name, got, r.want[i]))
			}
		}
	}
	return out
}

// sources common to both worlds.
func commonRows(t *testing.T, demo, other rendered) (server, otherServer, namesake, unlabelled, defaultOperator source) {
	_, elsewhere := ns("elsewhere")
	_, apps := ns(clusterNamespace)
	return demo.server, other.server,
		pod("a pod with demo's server labels in another namespace", "10.0.3.1", "elsewhere", elsewhere, demo.server.peer.Internal.PodLabels),
		pod("an unlabelled pod in the cluster's namespace", "10.0.1.9", clusterNamespace, apps, nil),
		operatorPod(t)
}

// defaultWorld: `networkPolicy: {enabled: true}` and nothing else.
func defaultWorld(t *testing.T) world {
	spec := func() *v1alpha1.NetworkPolicySpec { return &v1alpha1.NetworkPolicySpec{Enabled: true} }
	demo := renderCluster(t, natsCluster("demo", spec()), "10.0.1.1")
	other := renderCluster(t, natsCluster("other", spec()), "10.0.1.2")
	server, otherServer, namesake, unlabelled, operator := commonRows(t, demo, other)
	teamA, teamALabels := ns("team-a", "team", "a")
	_, apps := ns(clusterNamespace)
	random, randomLabels := ns("random")
	monitoring, monitoringLabels := ns("monitoring")
	return world{demo: demo, other: other, rows: []row{
		{server, allowRoute},
		{otherServer, allowNone},
		{pod("a pod in a namespace a customised spec allows", "10.0.2.1", teamA, teamALabels, labels("app", "x")), allowNone},
		{pod("a pod matching a customised spec's pod selector", "10.0.1.3", clusterNamespace, apps, labels("app", "web")), allowNone},
		{pod("a pod in a random namespace", "10.0.4.1", random, randomLabels, labels("app", "web")), allowNone},
		{operator, allowOperator},
		{pod("a pod in the monitoring namespace", "10.0.5.1", monitoring, monitoringLabels, labels("app", "prometheus")), allowNone},
		{namesake, allowNone},
		{unlabelled, allowNone},
		{pod("a pod with the operator's labels in another namespace", "10.0.4.2", random, randomLabels, operator.peer.Internal.PodLabels), allowNone},
	}}
}

// customSpec lists clients of every shape, a monitoring namespace, and
// moves the operator.
func customSpec() *v1alpha1.NetworkPolicySpec {
	return &v1alpha1.NetworkPolicySpec{
		Enabled: true,
		Clients: []v1alpha1.NetworkPolicyPeer{
			{NamespaceSelector: selector("team", "a")},
			{PodSelector: selector("app", "web")},
			{NamespaceSelector: selector(corev1.LabelMetadataName, "shop"), PodSelector: selector("role", "api")},
			{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24", Except: []v1alpha1.CIDR{"203.0.113.128/25"}}},
		},
		Monitoring: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: selector(corev1.LabelMetadataName, "monitoring")}},
		Operator:   v1alpha1.OperatorPeer{Namespace: "platform", PodLabels: map[string]string{"app": "ops"}},
	}
}

func customWorld(t *testing.T) world {
	demo := renderCluster(t, natsCluster("demo", customSpec()), "10.0.1.1")
	other := renderCluster(t, natsCluster("other", customSpec()), "10.0.1.2")
	server, otherServer, namesake, unlabelled, defaultOperator := commonRows(t, demo, other)
	teamA, teamALabels := ns("team-a", "team", "a")
	_, apps := ns(clusterNamespace)
	random, randomLabels := ns("random")
	shop, shopLabels := ns("shop")
	monitoring, monitoringLabels := ns("monitoring")
	platform, platformLabels := ns("platform")
	return world{demo: demo, other: other, rows: []row{
		{server, allowRoute},
		{otherServer, allowNone},
		{pod("a pod in an allowed namespace", "10.0.2.1", teamA, teamALabels, labels("app", "x")), allowClient},
		{pod("a pod matching the allowed pod selector", "10.0.1.3", clusterNamespace, apps, labels("app", "web")), allowClient},
		{pod("a pod in a random namespace, labelled as the allowed pod selector", "10.0.4.1", random, randomLabels, labels("app", "web")), allowNone},
		{pod("the operator pod", "10.0.9.2", platform, platformLabels, labels("app", "ops")), allowOperator},
		{pod("a monitoring namespace pod", "10.0.5.1", monitoring, monitoringLabels, labels("app", "prometheus")), allowMonitor},
		{pod("a pod of both the namespace and the pod selector", "10.0.6.1", shop, shopLabels, labels("role", "api")), allowClient},
		{pod("a pod of the selected namespace, not of the pod selector", "10.0.6.2", shop, shopLabels, labels("role", "db")), allowNone},
		{pod("a pod of the pod selector in another namespace", "10.0.4.3", random, randomLabels, labels("role", "api")), allowNone},
		{pod("a pod with the operator's labels outside its namespace", "10.0.4.4", random, randomLabels, labels("app", "ops")), allowNone},
		{pod("an unlabelled pod in the operator's namespace", "10.0.9.3", platform, platformLabels, nil), allowNone},
		{defaultOperator, allowNone},
		{external("an address in the ipBlock", "203.0.113.5"), allowClient},
		{external("an address in the ipBlock's except", "203.0.113.200"), allowNone},
		{external("an address outside the ipBlock", "198.51.100.7"), allowNone},
		{namesake, allowNone},
		{unlabelled, allowNone},
	}}
}

func TestTruthTable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		world func(*testing.T) world
	}{
		{"default policy", defaultWorld},
		{"customised spec", customWorld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.world(t)
			// Both clusters' policies are in force, as in a namespace where
			// both ask for one: policies add up, and neither may open the
			// other's ports.
			for _, m := range w.mismatches(w.demo.policy, w.other.policy) {
				t.Error(m)
			}
		})
	}
}

// ruleFor is np's ingress rule for port.
func ruleFor(np *networkingv1.NetworkPolicy, port int32) *networkingv1.NetworkPolicyIngressRule {
	for i, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port != nil && p.Port.IntVal == port {
				return &np.Spec.Ingress[i]
			}
		}
	}
	panic(fmt.Sprintf("no rule for port %d", port))
}

// TestTruthTableCatchesCarelessPolicies: the table is only worth having if
// it fails for policies that look right and are not. Each careless variant
// of the rendered policy must disagree with it somewhere.
func TestTruthTableCatchesCarelessPolicies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		world  func(*testing.T) world
		breaks func(*networkingv1.NetworkPolicy)
		// shows is a cell the variant gets wrong, for the reader.
		shows string
	}{
		{"route port open to the whole namespace", defaultWorld, func(np *networkingv1.NetworkPolicy) {
			ruleFor(np, render.ClusterPort).From = []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
		}, "other server -> port 6222"},
		{"route port open to every NATS pod of the namespace", customWorld, func(np *networkingv1.NetworkPolicy) {
			ruleFor(np, render.ClusterPort).From[0].PodSelector.MatchLabels = labels(render.LabelName, "nats")
		}, "other server -> port 6222"},
		{"route port rule without from: open to all", customWorld, func(np *networkingv1.NetworkPolicy) {
			ruleFor(np, render.ClusterPort).From = nil
		}, "-> port 6222"},
		{"one rule for every port", customWorld, func(np *networkingv1.NetworkPolicy) {
			var all networkingv1.NetworkPolicyIngressRule
			for _, r := range np.Spec.Ingress {
				all.Ports = append(all.Ports, r.Ports...)
				all.From = append(all.From, r.From...)
			}
			np.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{all}
		}, "the operator pod -> port 6222"},
		{"namespace and pod selector as two peers (or instead of and)", customWorld, func(np *networkingv1.NetworkPolicy) {
			rule := ruleFor(np, render.ClientPort)
			for i, p := range rule.From {
				if p.NamespaceSelector != nil && p.PodSelector != nil && p.NamespaceSelector.MatchLabels[corev1.LabelMetadataName] == "shop" {
					rule.From[i].PodSelector = nil
					rule.From = append(rule.From, networkingv1.NetworkPolicyPeer{PodSelector: p.PodSelector})
					return
				}
			}
			panic("no combined peer")
		}, "a pod of the selected namespace, not of the pod selector -> port 4222"},
		{"operator selected by pod labels alone", defaultWorld, func(np *networkingv1.NetworkPolicy) {
			for _, port := range []int32{render.ClientPort, render.MonitorPort} {
				ruleFor(np, port).From[0].NamespaceSelector = nil
			}
		}, "the operator -> port 4222"},
		{"operator selected by namespace alone", customWorld, func(np *networkingv1.NetworkPolicy) {
			ruleFor(np, render.ClientPort).From[0].PodSelector = nil
		}, "an unlabelled pod in the operator's namespace -> port 4222"},
		{"monitoring peers on the client port too", customWorld, func(np *networkingv1.NetworkPolicy) {
			client, monitor := ruleFor(np, render.ClientPort), ruleFor(np, render.MonitorPort)
			client.From = append(client.From, monitor.From[1:]...)
		}, "a monitoring namespace pod -> port 4222"},
		{"ipBlock without its except", customWorld, func(np *networkingv1.NetworkPolicy) {
			for _, p := range ruleFor(np, render.ClientPort).From {
				if p.IPBlock != nil {
					p.IPBlock.Except = nil
				}
			}
		}, "an address in the ipBlock's except -> port 4222"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.world(t)
			careless := w.demo.policy.DeepCopy()
			tc.breaks(careless)
			got := w.mismatches(careless, w.other.policy)
			if len(got) == 0 {
				t.Fatalf("the careless policy passes the truth table")
			}
			found := false
			for _, m := range got {
				found = found || strings.Contains(m, tc.shows)
			}
			if !found {
				t.Errorf("no mismatch mentions %q; mismatches:\n%s", tc.shows, strings.Join(got, "\n"))
			}
		})
	}
}
