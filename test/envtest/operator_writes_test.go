package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
