package render_test

import (
	"testing"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestSelectorsSkipANamesake: every selector the operator can still
// change matches this cluster's pods and not those of a NATS that Helm
// installed under the same name in the same namespace (same
// app.kubernetes.io/name and instance, another managed-by). Catches the
// careless variant of main before issue 17: selectors of name and
// instance alone, which put the namesake's pods under this cluster's
// PeerAuthentication, NetworkPolicy (as targets and as route peers),
// PodDisruptionBudget and Services. The StatefulSet's selector stays as it
// was (immutable: changing it would block every upgrade) and is not
// checked here.
func TestSelectorsSkipANamesake(t *testing.T) {
	c := cluster(withMesh(""), withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true}))
	objs := renderObjects(t, c, render.Inputs{})
	ours := statefulSetOf(t, c, render.Inputs{}).Spec.Template.Labels
	theirs := helmPodLabels(c.Name)

	matchLabels := func(m map[string]string) labels.Selector { return labels.SelectorFromSet(m) }
	fromLabelSelector := func(s *metav1.LabelSelector) labels.Selector {
		t.Helper()
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	np := find[*networkingv1.NetworkPolicy](t, objs, c.NetworkPolicyName())
	var routePeers *metav1.LabelSelector
	for _, rule := range np.Spec.Ingress {
		if rule.Ports[0].Port.IntVal == render.ClusterPort {
			routePeers = rule.From[0].PodSelector
		}
	}
	if routePeers == nil {
		t.Fatal("no ingress rule for the route port")
	}
	for _, tc := range []struct {
		name string
		sel  labels.Selector
	}{
		{"PeerAuthentication", matchLabels(find[*securityv1.PeerAuthentication](t, objs, c.PeerAuthenticationName()).Spec.Selector.MatchLabels)},
		{"NetworkPolicy podSelector", fromLabelSelector(&np.Spec.PodSelector)},
		{"NetworkPolicy route peers", fromLabelSelector(routePeers)},
		{"PodDisruptionBudget", fromLabelSelector(find[*policyv1.PodDisruptionBudget](t, objs, c.Name).Spec.Selector)},
		{"client Service", matchLabels(find[*corev1.Service](t, objs, c.ClientServiceName()).Spec.Selector)},
		{"headless Service", matchLabels(find[*corev1.Service](t, objs, c.HeadlessServiceName()).Spec.Selector)},
	} {
		if !tc.sel.Matches(labels.Set(ours)) {
			t.Errorf("%s (%s) does not select the cluster's own pods", tc.name, tc.sel)
		}
		if tc.sel.Matches(labels.Set(theirs)) {
			t.Errorf("%s (%s) selects the pods of a Helm release of the same name", tc.name, tc.sel)
		}
	}
}
