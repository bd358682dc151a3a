package netpol_test

import (
	"strings"
	"testing"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// listenerWorld is demo with both listeners and clients of the client
// port in team-a: WebSocket admits the client port's peers (websocket.from
// unset), MQTT only its own (mqtt.from: an address range of devices).
func listenerWorld(t *testing.T) (rendered, []source, map[string][2]bool) {
	t.Helper()
	c := natsCluster("demo", &v1alpha1.NetworkPolicySpec{Enabled: true,
		Clients: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: selector("team", "a")}}})
	c.Spec.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true}
	c.Spec.MQTT = &v1alpha1.MQTTSpec{From: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "198.51.100.0/24"}}}}
	demo := renderCluster(t, c, "10.0.1.1")
	teamA, teamALabels := ns("team-a", "team", "a")
	random, randomLabels := ns("random")
	_, apps := ns(clusterNamespace)
	rows := []source{
		pod("a client of the client port (team-a)", "10.0.2.1", teamA, teamALabels, labels("app", "x")),
		external("a device in mqtt.from", "198.51.100.7"),
		external("an address nobody named", "203.0.113.9"),
		pod("a pod in a random namespace", "10.0.4.1", random, randomLabels, labels("app", "x")),
		pod("an unlabelled pod in the cluster's namespace", "10.0.1.9", clusterNamespace, apps, nil),
		operatorPod(t),
		demo.server,
	}
	// [websocket, mqtt]
	want := map[string][2]bool{
		rows[0].name: {true, false},
		rows[1].name: {false, true},
		rows[2].name: {false, false},
		rows[3].name: {false, false},
		rows[4].name: {false, false},
		rows[5].name: {false, false}, // the operator speaks neither protocol
		rows[6].name: {false, false},
	}
	return demo, rows, want
}

func listenerMismatches(demo rendered, rows []source, want map[string][2]bool, np *networkingv1.NetworkPolicy) []string {
	eval := matcher.BuildNetworkPolicies(false, []*networkingv1.NetworkPolicy{np})
	var out []string
	for _, who := range rows {
		for i, port := range []string{"websocket", "mqtt"} {
			if got := allowed(eval, who, demo, port); got != want[who.name][i] {
				out = append(out, who.name+" -> "+port+": allowed "+boolString(got))
			}
		}
	}
	return out
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestListenerPortsTruthTable: who reaches the WebSocket and MQTT ports,
// judged by a real NetworkPolicy evaluator on the policy as `kubenats
// render` prints it.
func TestListenerPortsTruthTable(t *testing.T) {
	demo, rows, want := listenerWorld(t)
	for _, m := range listenerMismatches(demo, rows, want, demo.policy) {
		t.Error(m)
	}
	// Nobody named: both ports closed to everyone, the client port's
	// operator included.
	c := natsCluster("demo", &v1alpha1.NetworkPolicySpec{Enabled: true})
	c.Spec.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true}
	c.Spec.MQTT = &v1alpha1.MQTTSpec{}
	closed := renderCluster(t, c, "10.0.1.1")
	eval := matcher.BuildNetworkPolicies(false, []*networkingv1.NetworkPolicy{closed.policy})
	for _, who := range rows {
		for _, port := range []string{"websocket", "mqtt"} {
			if allowed(eval, who, closed, port) {
				t.Errorf("nobody named: %s -> %s allowed", who.name, port)
			}
		}
	}
}

// TestListenerTruthTableCatchesCarelessPolicies: each careless variant of
// the listeners' rules disagrees with the table where it should.
func TestListenerTruthTableCatchesCarelessPolicies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		breaks func(np *networkingv1.NetworkPolicy)
		shows  string
	}{
		{"websocket rule without from: open to all", func(np *networkingv1.NetworkPolicy) {
			ruleFor(np, 8080).From = nil
		}, "an address nobody named -> websocket"},
		{"mqtt admits the client port's peers beside its own", func(np *networkingv1.NetworkPolicy) {
			r := ruleFor(np, 1883)
			r.From = append(r.From, networkingv1.NetworkPolicyPeer{NamespaceSelector: selector("team", "a")})
		}, "a client of the client port (team-a) -> mqtt"},
		{"the operator on the listeners too", func(np *networkingv1.NetworkPolicy) {
			op := ruleFor(np, 4222).From[0]
			ruleFor(np, 8080).From = append(ruleFor(np, 8080).From, op)
		}, "-> websocket"},
		{"listeners folded into the client port's rule", func(np *networkingv1.NetworkPolicy) {
			client := ruleFor(np, 4222)
			client.Ports = append(client.Ports, ruleFor(np, 8080).Ports...)
			client.Ports = append(client.Ports, ruleFor(np, 1883).Ports...)
			var keep []networkingv1.NetworkPolicyIngressRule
			for _, r := range np.Spec.Ingress {
				if p := r.Ports[0].Port.IntVal; p != 8080 && p != 1883 {
					keep = append(keep, r)
				}
			}
			np.Spec.Ingress = keep
		}, "-> mqtt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			demo, rows, want := listenerWorld(t)
			careless := demo.policy.DeepCopy()
			tc.breaks(careless)
			got := listenerMismatches(demo, rows, want, careless)
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
