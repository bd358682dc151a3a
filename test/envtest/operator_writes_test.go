package envtest_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/internal/render"
)

// TestOperatorWritesOnlyWhatItManages acts as the operator's own
// ServiceAccount (as the operator of every other test here runs) against
// the shipped admission policy: RBAC lets that identity write Secrets,
// ConfigMaps, NetworkPolicies, StatefulSets and delete pods in every
// namespace; the policy holds it to what kubenats makes. Each write below
// is one RBAC allows. Catches the careless variants: no policy at all
// (every refusal below is accepted), a policy on labels only (the
// selector, ServiceAccount and namespace cases pass), and one that checks
// the object written but not the one deleted (the pod deletion passes).
// Every other test of this suite and the end-to-end suite runs the
// operator under the same policy, which is the proof that it refuses
// nothing the operator needs.
func TestOperatorWritesOnlyWhatItManages(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	op, err := client.New(operatorCfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	managed := map[string]string{render.LabelManagedBy: render.ManagedBy}
	meta := func(namespace, name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}
	}
	refused := func(what, want string, write func() error) {
		t.Helper()
		// The API server loads a new policy asynchronously: wait until it
		// refuses, with the policy's own message.
		eventually(t, wait, func() error {
			err := write()
			if err == nil || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("%s: %v, want refused with %q", what, err, want)
			}
			return nil
		})
	}
	dry := client.DryRunAll

	// Allowed: what kubenats makes.
	if err := op.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: meta(ns, "ours", managed)}, dry); err != nil {
		t.Fatalf("a labelled ConfigMap in a tenant namespace: %v", err)
	}

	refused("an unlabelled Secret", "writes only objects labelled", func() error {
		return op.Create(ctx(t), &corev1.Secret{ObjectMeta: meta(ns, "theirs", nil)}, dry)
	})
	refused("a labelled ConfigMap in kube-system", "writes nothing in the namespace kube-system", func() error {
		return op.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: meta("kube-system", "ours", managed)}, dry)
	})
	refused("a NetworkPolicy selecting every pod", "would select other pods", func() error {
		return op.Create(ctx(t), &networkingv1.NetworkPolicy{ObjectMeta: meta(ns, "open", managed)}, dry)
	})
	refused("a Service selecting another's pods", "would select other pods", func() error {
		return op.Create(ctx(t), &corev1.Service{ObjectMeta: meta(ns, "steal", managed), Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "payments"}, Ports: []corev1.ServicePort{{Port: 4222}},
		}}, dry)
	})
	refused("a StatefulSet whose pods run as another ServiceAccount", "ServiceAccount of their own cluster", func() error {
		labels := map[string]string{"app": "x", render.LabelManagedBy: render.ManagedBy}
		return op.Create(ctx(t), &appsv1.StatefulSet{ObjectMeta: meta(ns, "nats", managed), Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				ServiceAccountName: "ci-deployer",
				Containers:         []corev1.Container{{Name: "nats", Image: "nats"}},
			}},
		}}, dry)
	})

	// A pod kubenats did not make, deleted: the policy looks at the object
	// as it was.
	pod := &corev1.Pod{ObjectMeta: meta(ns, "payments-0", map[string]string{"app": "payments"}),
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
	if err := k8s.Create(ctx(t), pod); err != nil {
		t.Fatal(err)
	}
	refused("deleting another's pod", "writes only objects labelled", func() error {
		return op.Delete(ctx(t), pod, dry)
	})

	// The one object of another's a takeover deletes: the official
	// chart's StatefulSet, its pods orphaned, never with them (a policy
	// that let any chart StatefulSet go would let the cascade through).
	chartLabels := map[string]string{"helm.sh/chart": "nats-2.14.2", render.LabelName: "nats", render.LabelInstance: "nats"}
	chart := &appsv1.StatefulSet{ObjectMeta: meta(ns, "nats", chartLabels), Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: chartLabels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: chartLabels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "nats", Image: "nats"}},
		}},
	}}
	if err := k8s.Create(ctx(t), chart); err != nil {
		t.Fatal(err)
	}
	refused("deleting the chart's StatefulSet with its pods", "writes only objects labelled", func() error {
		return op.Delete(ctx(t), chart, dry, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	if err := op.Delete(ctx(t), chart, dry, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Errorf("releasing the chart's StatefulSet, its pods orphaned: %v", err)
	}
}

// operatorClient is a client acting as the operator's own ServiceAccount.
func operatorClient(t *testing.T) client.Client {
	t.Helper()
	op, err := client.New(operatorCfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// refusedWith waits until write is refused with want in the error: the API
// server loads new policies, and their params, asynchronously.
func refusedWith(t *testing.T, what, want string, write func() error) {
	t.Helper()
	eventually(t, wait, func() error {
		err := write()
		if err == nil || !strings.Contains(err.Error(), want) {
			return fmt.Errorf("%s: %v, want refused with %q", what, err, want)
		}
		return nil
	})
}

// clusterOwner is a controller reference to a NatsCluster of that name
// and UID: nothing here needs it to exist.
func clusterOwner(name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster", Name: name, UID: types.UID(uid), Controller: ptr.To(true)}
}

// TestOperatorUpdatesOnlyWhatItAlreadyManages: the operator's update of
// an object must find it labelled as kubenats' already, and keep its
// controller; the takeover's claim on a chart release's objects is the
// one exception, and only for them: its pods labelled, their owners
// kept. Careless variants caught (run): the policy of main, which looked
// only at the object as written, so one update adding the label took over
// any object (the ConfigMap and NetworkPolicy cases pass); and a takeover
// exception on the chart's labels alone (the chart Service handed to no
// NatsCluster, and the chart pod given an owner, pass).
func TestOperatorUpdatesOnlyWhatItAlreadyManages(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	op := operatorClient(t)
	managed := map[string]string{render.LabelManagedBy: render.ManagedBy}
	dry := client.DryRunAll

	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs"}, Data: map[string]string{"k": "v"}}
	create(t, theirs)
	refusedWith(t, "labelling another's ConfigMap as kubenats'", "updates only what it already manages", func() error {
		next := theirs.DeepCopy()
		next.Labels = managed
		return op.Patch(ctx(t), next, client.MergeFrom(theirs), dry)
	})

	// A kind the operator may delete: changing owner references takes
	// that right (the OwnerReferencesPermissionEnforcement plugin), so
	// only there does the policy have the last word.
	owned := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned", Labels: managed,
		OwnerReferences: []metav1.OwnerReference{clusterOwner("a", "uid-a")}},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: managed}}}
	create(t, owned)
	refusedWith(t, "handing a cluster's NetworkPolicy to another", "updates only what it already manages", func() error {
		next := owned.DeepCopy()
		next.OwnerReferences = []metav1.OwnerReference{clusterOwner("b", "uid-b")}
		return op.Patch(ctx(t), next, client.MergeFrom(owned), dry)
	})
	next := owned.DeepCopy()
	next.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	if err := op.Patch(ctx(t), next, client.MergeFrom(owned), dry); err != nil {
		t.Errorf("updating its own NetworkPolicy: %v", err)
	}

	// The takeover's claim: the chart's Service becomes a NatsCluster's.
	chart := map[string]string{"helm.sh/chart": "nats-2.14.2", render.LabelName: "nats", render.LabelInstance: "nats", render.LabelManagedBy: "Helm"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats", Labels: chart}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{render.LabelName: "nats", render.LabelInstance: "nats"}, Ports: []corev1.ServicePort{{Port: 4222}},
	}}
	create(t, svc)
	claim := func(owners ...metav1.OwnerReference) *corev1.Service {
		next := svc.DeepCopy()
		next.Labels = maps.Clone(chart)
		next.Labels[render.LabelManagedBy] = render.ManagedBy
		next.Spec.Selector = map[string]string{render.LabelName: "nats", render.LabelInstance: "nats", render.LabelManagedBy: render.ManagedBy}
		next.OwnerReferences = owners
		return next
	}
	refusedWith(t, "claiming the chart's Service for no NatsCluster", "updates only what it already manages", func() error {
		return op.Patch(ctx(t), claim(), client.MergeFrom(svc), dry)
	})
	// Claimed for a NatsCluster, the change of owners needs delete on
	// Services, which the operator's role does not grant: the owner
	// reference plugin refuses it before the policy is asked. The
	// end-to-end takeover runs without that plugin, through this policy.

	// And its pods, labelled, their owners kept.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-0", Labels: maps.Clone(chart)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nats", Image: "nats"}}}}
	create(t, pod)
	labelled := pod.DeepCopy()
	labelled.Labels[render.LabelManagedBy] = render.ManagedBy
	if err := op.Patch(ctx(t), labelled, client.MergeFrom(pod), dry); err != nil {
		t.Errorf("the takeover labelling the chart's pod: %v", err)
	}
	refusedWith(t, "labelling the chart's pod and giving it an owner", "updates only what it already manages", func() error {
		next := labelled.DeepCopy()
		next.OwnerReferences = []metav1.OwnerReference{clusterOwner("nats", "uid-nats")}
		return op.Patch(ctx(t), next, client.MergeFrom(pod), dry)
	})
}

// TestOperatorRoutesIngressesOnlyToItsCluster: an Ingress the operator
// writes routes every path to the client Service it is named after, and
// has no default backend. Careless variant caught (run): the policy
// without its Ingress rule (the operator could publish any Service of a
// tenant's namespace under a host of the tenant's choosing).
func TestOperatorRoutesIngressesOnlyToItsCluster(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	op := operatorClient(t)
	managed := map[string]string{render.LabelManagedBy: render.ManagedBy}
	to := func(service string) *networkingv1.Ingress {
		prefix := networkingv1.PathTypePrefix
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-websocket", Labels: managed},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "nats.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &prefix,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Name: "websocket"}}},
				}}}},
			}}}}
	}
	refusedWith(t, "an Ingress to another Service", "routes an Ingress only to the client Service of its own cluster", func() error {
		return op.Create(ctx(t), to("billing-api"), client.DryRunAll)
	})
	withDefault := to("nats")
	withDefault.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "billing-api", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	refusedWith(t, "an Ingress with a default backend", "routes an Ingress only to the client Service of its own cluster", func() error {
		return op.Create(ctx(t), withDefault, client.DryRunAll)
	})
	if err := op.Create(ctx(t), to("nats"), client.DryRunAll); err != nil {
		t.Errorf("the cluster's own Ingress: %v", err)
	}
}

// TestOperatorRunsServersOnlyAsTheirClustersServiceAccount: the pods of a
// StatefulSet the operator writes run as a ServiceAccount labelled as
// kubenats' and controlled by the StatefulSet's own NatsCluster, not
// merely one named as the StatefulSet. Careless variant caught (run): the
// rule on names alone (a NatsCluster named after the namespace's
// privileged "ci-deployer" runs its servers as it), and one on the label
// alone (another cluster's ServiceAccount passes).
func TestOperatorRunsServersOnlyAsTheirClustersServiceAccount(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	op := operatorClient(t)
	managed := map[string]string{render.LabelManagedBy: render.ManagedBy}
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci-deployer"}})
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats", Labels: managed,
		OwnerReferences: []metav1.OwnerReference{clusterOwner("nats", "uid-nats")}}})
	statefulSet := func(name, ownerUID string) *appsv1.StatefulSet {
		labels := map[string]string{render.LabelInstance: name, render.LabelManagedBy: render.ManagedBy}
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: managed, OwnerReferences: []metav1.OwnerReference{clusterOwner(name, ownerUID)}},
			Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					ServiceAccountName: name,
					Containers:         []corev1.Container{{Name: "nats", Image: "nats"}},
				}},
			},
		}
	}
	refusedWith(t, "a StatefulSet named after a privileged ServiceAccount", "is not that one", func() error {
		return op.Create(ctx(t), statefulSet("ci-deployer", "uid-ci"), client.DryRunAll)
	})
	refusedWith(t, "a StatefulSet of another cluster than its ServiceAccount's", "is not that one", func() error {
		return op.Create(ctx(t), statefulSet("nats", "uid-other"), client.DryRunAll)
	})
	if err := op.Create(ctx(t), statefulSet("nats", "uid-nats"), client.DryRunAll); err != nil {
		t.Errorf("the cluster's own StatefulSet: %v", err)
	}
}
