package envtest_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// children are the objects a NatsCluster in mode users gets.
func children(c *v1alpha1.NatsCluster) []client.Object {
	ns := c.Namespace
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(c.Name)},
		&corev1.ConfigMap{ObjectMeta: meta(c.Name + "-config")},
		&corev1.Service{ObjectMeta: meta(c.Name)},
		&corev1.Service{ObjectMeta: meta(c.Name + "-headless")},
		&appsv1.StatefulSet{ObjectMeta: meta(c.Name)},
		&policyv1.PodDisruptionBudget{ObjectMeta: meta(c.Name)},
		&corev1.Secret{ObjectMeta: meta(c.Name + "-auth")},
		&corev1.Secret{ObjectMeta: meta(c.Name + "-system")},
		&corev1.Secret{ObjectMeta: meta(c.Name + "-client")},
	}
}

func TestReconcileCreatesEveryChildWithAControllerOwner(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	if err := k8s.Create(ctx(t), c); err != nil {
		t.Fatal(err)
	}
	for _, child := range children(c) {
		eventually(t, wait, func() error {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(child), child); err != nil {
				return err
			}
			ref := metav1.GetControllerOf(child)
			if ref == nil || ref.UID != c.UID || ref.Kind != "NatsCluster" || ref.APIVersion != v1alpha1.GroupVersion.String() {
				return fmt.Errorf("%T %s: controller reference %+v, want NatsCluster %s", child, child.GetName(), ref, c.UID)
			}
			if child.GetLabels()[render.LabelManagedBy] != render.ManagedBy {
				return fmt.Errorf("%T %s: labels %v lack managed-by", child, child.GetName(), child.GetLabels())
			}
			return nil
		})
	}
}
