package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func withIstio(mtls v1alpha1.MeshMTLSMode) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) {
		s.Mesh = &v1alpha1.MeshSpec{Istio: &v1alpha1.IstioMeshSpec{MTLS: mtls}}
	}
}

// meshCondition waits for c's MeshReady to have status and reason.
func meshCondition(t *testing.T, c *v1alpha1.NatsCluster, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		got = meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMeshReady)
		if got == nil || got.Status != status || got.Reason != reason {
			return fmt.Errorf("MeshReady %+v, want %s/%s", got, status, reason)
		}
		return nil
	})
	return got
}

// TestMeshWithoutIstio: this suite's API server has no Istio CRDs. The
// flag is refused with a condition and a Warning event; nothing else
// changes (no sidecar asked for), the cluster still becomes what it would
// be without the flag, and the operator keeps running (this suite's
// manager started without Istio's CRDs at all).
func TestMeshWithoutIstio(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", withIstio(""))
	create(t, c)
	if got := c.Spec.Mesh.Istio.MTLS; got != v1alpha1.MeshMTLSStrict {
		t.Errorf("mtls defaulted to %q, want Strict", got)
	}
	cond := meshCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonIstioNotInstalled)
	if !strings.Contains(cond.Message, "install Istio") {
		t.Errorf("message %q does not say what to do", cond.Message)
	}
	eventually(t, wait, func() error { return eventAbout(t, c, v1alpha1.ReasonIstioNotInstalled, "PeerAuthentication") })
	sts := &appsv1.StatefulSet{}
	sts.Namespace, sts.Name = ns, "nats"
	get(t, sts)
	for k := range sts.Spec.Template.Labels {
		if strings.Contains(k, "istio.io") {
			t.Errorf("pod template label %s without Istio", k)
		}
	}
	for k := range sts.Spec.Template.Annotations {
		if strings.Contains(k, "istio.io") {
			t.Errorf("pod template annotation %s without Istio", k)
		}
	}
	// Ready is not the mesh's to hold: its reason is the servers' (no
	// kubelet here), never the mesh's.
	if r := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Reason == v1alpha1.ReasonIstioNotInstalled {
		t.Errorf("Ready = %+v", r)
	}
	// The mesh removed again: no MeshReady left, as before.
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.Mesh = nil })
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if m := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMeshReady); m != nil {
			return fmt.Errorf("MeshReady %+v still there", m)
		}
		return nil
	})
}

// TestMeshValidation: the API server refuses an unknown mode.
func TestMeshValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	err := k8s.Create(ctx(t), natsCluster(ns, "bad", withIstio("Disable")))
	if err == nil || !strings.Contains(err.Error(), "spec.mesh.istio.mtls") {
		t.Fatalf("Create = %v, want a refusal naming spec.mesh.istio.mtls", err)
	}
}
