package envtest_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestSpecChangesReachTheChildren(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	get(t, sts)

	memory := resource.MustParse("2Gi")
	update(t, c, func(c *v1alpha1.NatsCluster) {
		c.Spec.Replicas = ptr.To[int32](5)
		c.Spec.Version = "2.14.10"
		c.Spec.Service.Type = v1alpha1.ServiceType(corev1.ServiceTypeNodePort)
		c.Spec.Resources = &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: memory},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: memory},
		}
	})
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
			return err
		}
		nats := sts.Spec.Template.Spec.Containers[0]
		switch {
		case *sts.Spec.Replicas != 5:
			return fmt.Errorf("replicas = %d, want 5", *sts.Spec.Replicas)
		case nats.Image != "nats:2.14.10-alpine":
			return fmt.Errorf("image = %s, want nats:2.14.10-alpine", nats.Image)
		case !nats.Resources.Limits.Memory().Equal(memory):
			return fmt.Errorf("memory limit = %s, want 2Gi", nats.Resources.Limits.Memory())
		}
		return nil
	})
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(svc), svc); err != nil {
			return err
		}
		if svc.Spec.Type != corev1.ServiceTypeNodePort {
			return fmt.Errorf("service type = %s, want NodePort", svc.Spec.Type)
		}
		return nil
	})
	// The routes follow the replicas: five servers, five routes, in the
	// routes Secret (they carry the route password).
	routes := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: (&v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: "nats"}}).RouteSecretName()}}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(routes), routes); err != nil {
			return err
		}
		return containsAll(string(routes.Data[render.RouteURLsKey]), "@nats-4.nats-headless:6222")
	})
}

func TestClaimRetentionFollowsThePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy v1alpha1.PVCRetentionPolicy
		want   appsv1.PersistentVolumeClaimRetentionPolicyType
	}{
		{v1alpha1.PVCRetain, appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{v1alpha1.PVCDelete, appsv1.DeletePersistentVolumeClaimRetentionPolicyType},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
				s.JetStream.FileStore.PVCRetentionPolicy = tc.policy
			})
			create(t, c)
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
			get(t, sts)
			got := sts.Spec.PersistentVolumeClaimRetentionPolicy
			if got == nil || got.WhenDeleted != tc.want || got.WhenScaled != tc.want {
				t.Fatalf("retention policy = %+v, want %s on deletion and scale-down", got, tc.want)
			}
		})
	}
}

func TestGrowingTheStoreReplacesTheStatefulSetKeepingPods(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	get(t, sts)
	size := resource.MustParse("20Gi")
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.FileStore.Size = &size })
	// The claim template is immutable: the operator deletes the StatefulSet
	// with orphan propagation, so the garbage collector (absent here) would
	// leave pods and claims in place; then it creates the new one.
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
			return err
		}
		if sts.DeletionTimestamp.IsZero() {
			return fmt.Errorf("the StatefulSet is not being deleted")
		}
		for _, f := range sts.Finalizers {
			if f == metav1.FinalizerOrphanDependents {
				return nil
			}
		}
		return fmt.Errorf("finalizers %v: not an orphaning deletion", sts.Finalizers)
	})
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonProgressing)
}

func containsAll(text string, parts ...string) error {
	for _, p := range parts {
		if !contains(text, p) {
			return fmt.Errorf("%q not in:\n%s", p, text)
		}
	}
	return nil
}
