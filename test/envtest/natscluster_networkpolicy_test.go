package envtest_test

import (
	"fmt"
	"maps"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/render"
)

func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func withPolicy(p v1alpha1.NetworkPolicySpec) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) { s.NetworkPolicy = &p }
}

// everyPeerShape lists clients of each shape the API accepts.
func everyPeerShape() v1alpha1.NetworkPolicySpec {
	return v1alpha1.NetworkPolicySpec{
		Enabled: true,
		Clients: []v1alpha1.NetworkPolicyPeer{
			{NamespaceSelector: matchLabels("team", "a")},
			{NamespaceSelector: &metav1.LabelSelector{}},
			{PodSelector: matchLabels("app", "web")},
			{NamespaceSelector: matchLabels("kubernetes.io/metadata.name", "shop"), PodSelector: matchLabels("role", "api")},
			{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24", Except: []v1alpha1.CIDR{"203.0.113.128/25", "203.0.113.7/32"}}},
			{IPBlock: &v1alpha1.IPBlock{CIDR: "2001:db8::/64", Except: []v1alpha1.CIDR{"2001:db8::/96"}}},
		},
		Monitoring: []v1alpha1.NetworkPolicyPeer{{NamespaceSelector: matchLabels("kubernetes.io/metadata.name", "monitoring")}},
		Operator:   v1alpha1.OperatorPeer{Namespace: "platform", PodLabels: map[string]string{"app": "ops"}},
	}
}

func TestNetworkPolicyValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	peer := func(p v1alpha1.NetworkPolicyPeer) v1alpha1.NetworkPolicySpec {
		return v1alpha1.NetworkPolicySpec{Enabled: true, Clients: []v1alpha1.NetworkPolicyPeer{p}}
	}
	block := func(cidr v1alpha1.CIDR, except ...v1alpha1.CIDR) v1alpha1.NetworkPolicySpec {
		return peer(v1alpha1.NetworkPolicyPeer{IPBlock: &v1alpha1.IPBlock{CIDR: cidr, Except: except}})
	}
	for _, tc := range []struct {
		name string
		spec v1alpha1.NetworkPolicySpec
		want []string
	}{
		{"empty-peer", peer(v1alpha1.NetworkPolicyPeer{}),
			[]string{"spec.networkPolicy.clients[0]", "a peer needs namespaceSelector, podSelector or ipBlock"}},
		{"empty-monitoring-peer", v1alpha1.NetworkPolicySpec{Monitoring: []v1alpha1.NetworkPolicyPeer{{}}},
			[]string{"spec.networkPolicy.monitoring[0]", "a peer needs"}},
		{"ipblock-with-pod-selector", peer(v1alpha1.NetworkPolicyPeer{PodSelector: matchLabels("app", "web"), IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8"}}),
			[]string{"spec.networkPolicy.clients[0]", "ipBlock stands alone"}},
		{"ipblock-with-namespace-selector", peer(v1alpha1.NetworkPolicyPeer{NamespaceSelector: matchLabels("team", "a"), IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8"}}),
			[]string{"ipBlock stands alone"}},
		{"cidr-without-prefix", block("10.0.0.1"),
			[]string{"spec.networkPolicy.clients[0].ipBlock.cidr", "must be a CIDR"}},
		{"cidr-out-of-range", block("999.0.0.0/8"),
			[]string{"spec.networkPolicy.clients[0].ipBlock.cidr", "must be a CIDR"}},
		{"except-outside", block("10.0.0.0/16", "10.1.0.0/24"),
			[]string{"spec.networkPolicy.clients[0].ipBlock", "strictly inside"}},
		{"except-equal", block("10.0.0.0/16", "10.0.0.0/16"),
			[]string{"strictly inside"}},
		{"except-not-a-cidr", block("10.0.0.0/16", "10.0.1.1"),
			[]string{"strictly inside"}},
		{"except-other-family", block("10.0.0.0/16", "2001:db8::/64"),
			[]string{"strictly inside"}},
		{"operator-namespace-not-a-name", v1alpha1.NetworkPolicySpec{Operator: v1alpha1.OperatorPeer{Namespace: "Kube_Nats"}},
			[]string{"spec.networkPolicy.operator.namespace", "should match"}},
		{"too-many-clients", v1alpha1.NetworkPolicySpec{Clients: make33Peers()},
			[]string{"spec.networkPolicy.clients", "32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := k8s.Create(ctx(t), natsCluster(ns, tc.name, withPolicy(tc.spec)))
			assertInvalid(t, err, tc.want...)
		})
	}
	// An empty podLabels map would admit every pod of the operator's
	// namespace. Go's omitempty cannot send one, so this is raw JSON.
	t.Run("operator-pod-labels-empty", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": "NatsCluster",
			"metadata": map[string]any{"name": "operator-pod-labels-empty", "namespace": ns},
			"spec":     map[string]any{"networkPolicy": map[string]any{"enabled": true, "operator": map[string]any{"podLabels": map[string]any{}}}},
		}}
		assertInvalid(t, k8s.Create(ctx(t), u), "spec.networkPolicy.operator.podLabels", "at least 1")
	})
	// The rules refuse only what they mean to.
	t.Run("every-peer-shape-accepted", func(t *testing.T) {
		if err := k8s.Create(ctx(t), natsCluster(ns, "every-peer-shape", withPolicy(everyPeerShape()))); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
}

func make33Peers() []v1alpha1.NetworkPolicyPeer {
	out := make([]v1alpha1.NetworkPolicyPeer, 33)
	for i := range out {
		out[i] = v1alpha1.NetworkPolicyPeer{PodSelector: matchLabels("n", fmt.Sprint(i))}
	}
	return out
}

// TestNetworkPolicyOperatorDefaults: the API server's defaults for the
// operator's place are the ones render falls back to, and those of
// config/manager (checked against the file in test/netpol).
func TestNetworkPolicyOperatorDefaults(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "defaults", withPolicy(v1alpha1.NetworkPolicySpec{Enabled: true}))
	create(t, c)
	get(t, c)
	var empty v1alpha1.OperatorPeer
	got := c.Spec.NetworkPolicy.Operator
	if got.Namespace != empty.NamespaceOrDefault() || !maps.Equal(got.PodLabels, empty.PodLabelsOrDefault()) {
		t.Errorf("API server defaults operator to %+v, render to {%s %v}", got, empty.NamespaceOrDefault(), empty.PodLabelsOrDefault())
	}
}

func policyKey(c *v1alpha1.NatsCluster) client.ObjectKey {
	return client.ObjectKey{Namespace: c.Namespace, Name: c.NetworkPolicyName()}
}

// TestNetworkPolicyAppliedAsRenderedAndRemovedWhenTurnedOff: the policy is
// a child like any other (controller reference, render's fields kept by the
// API server), and turning it off removes it, only it: neither a policy of
// the user's with the same labels nor another cluster's.
func TestNetworkPolicyAppliedAsRenderedAndRemovedWhenTurnedOff(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", withPolicy(everyPeerShape()))
	neighbour := natsCluster(ns, "neighbour", withPolicy(v1alpha1.NetworkPolicySpec{Enabled: true}))
	create(t, c)
	create(t, neighbour)
	objs, err := render.Objects(c, render.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := manifest.Unstructured(objs[0])
	if err != nil || want.GetKind() != "NetworkPolicy" {
		t.Fatalf("first rendered object %s, %v", want.GetKind(), err)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(want.GroupVersionKind())
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), policyKey(c), live); err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(live); ref == nil || ref.UID != c.UID {
			return fmt.Errorf("controller reference %+v, want NatsCluster %s", ref, c.UID)
		}
		return subset(want.Object, live.Object, "NetworkPolicy")
	})
	get(t, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: neighbour.NetworkPolicyName()}})

	// The user's own policy, labelled as if it were the cluster's.
	mine := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine", Labels: map[string]string{
			render.LabelInstance: c.Name, render.LabelManagedBy: render.ManagedBy, render.LabelName: "nats",
		}},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}
	create(t, mine)

	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.NetworkPolicy.Enabled = false })
	eventually(t, wait, func() error {
		err := k8s.Get(ctx(t), policyKey(c), &networkingv1.NetworkPolicy{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the policy is still there (%v)", err)
	})
	eventually(t, wait, func() error { return removedEvent(t, c) })
	// Nothing else goes, while the operator passes again and after.
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.PodTemplate.Labels = map[string]string{"pass": "again"} })
	kept := func() error {
		for _, key := range []client.ObjectKey{client.ObjectKeyFromObject(mine), policyKey(neighbour)} {
			if err := k8s.Get(ctx(t), key, &networkingv1.NetworkPolicy{}); err != nil {
				return fmt.Errorf("NetworkPolicy %s: %v, want it kept", key, err)
			}
		}
		return nil
	}
	waitObserved(t, c, kept)
	if err := kept(); err != nil {
		t.Fatal(err)
	}

	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.NetworkPolicy.Enabled = true })
	get(t, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.NetworkPolicyName()}})
}

func removedEvent(t *testing.T, c *v1alpha1.NatsCluster) error {
	var list eventsv1.EventList
	if err := k8s.List(ctx(t), &list, client.InNamespace(c.Namespace)); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.UID == c.UID && e.Reason == "Removed" && e.Related != nil && e.Related.Kind == "NetworkPolicy" {
			return nil
		}
	}
	return fmt.Errorf("no Removed event about the NetworkPolicy among %d events", len(list.Items))
}

// TestNetworkPolicySelectorTheSchemaCannotRefuse: a matchExpressions
// operator is free text in the schema; the policy the operator would write
// is refused by render, and the user reads why in the Ready condition.
func TestNetworkPolicySelectorTheSchemaCannotRefuse(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", withPolicy(v1alpha1.NetworkPolicySpec{Enabled: true, Clients: []v1alpha1.NetworkPolicyPeer{{
		PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Equals", Values: []string{"web"}}}},
	}}}))
	create(t, c)
	got := readyCondition(t, c, metav1.ConditionFalse, "ConfigInvalid")
	for _, cond := range got.Status.Conditions {
		if cond.Type == v1alpha1.ConditionReady && !contains(cond.Message, "spec.networkPolicy.clients[0].podSelector") {
			t.Errorf("Ready message %q does not name the field", cond.Message)
		}
	}
	if err := k8s.Get(ctx(t), policyKey(c), &networkingv1.NetworkPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("NetworkPolicy: %v, want none written", err)
	}
}
