package envtest_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// serversReady writes the StatefulSet status the StatefulSet controller
// would write once every pod runs the current template and is ready. There
// is no controller manager in this suite.
func serversReady(t *testing.T, c *v1alpha1.NatsCluster) {
	t.Helper()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}}
	get(t, sts)
	n := ptr.Deref(sts.Spec.Replicas, 1)
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: sts.Generation,
		Replicas:           n, ReadyReplicas: n, UpdatedReplicas: n, CurrentReplicas: n, AvailableReplicas: n,
		CurrentRevision: "r1", UpdateRevision: "r1",
	}
	if err := k8s.Status().Update(ctx(t), sts); err != nil {
		t.Fatal(err)
	}
}

func TestStatusProgressesToReady(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)

	c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonProgressing)
	if c.Status.Phase != v1alpha1.PhaseInstalling {
		t.Fatalf("phase = %s while progressing, want Installing", c.Status.Phase)
	}

	serversReady(t, c)
	c = readyCondition(t, c, metav1.ConditionTrue, v1alpha1.ReasonReady)
	st := c.Status
	if st.Phase != v1alpha1.PhaseReady || st.ReadyReplicas != 3 || st.ObservedGeneration != c.Generation {
		t.Fatalf("status = %+v, want phase Ready, 3 ready replicas, observedGeneration %d", st, c.Generation)
	}
	if st.Conditions[0].Type != v1alpha1.ConditionReady {
		t.Fatalf("first condition is %s, want Ready first", st.Conditions[0].Type)
	}
	if want := "tls://nats." + ns + ".svc:4222"; st.Endpoint.Internal != want {
		t.Fatalf("internal endpoint = %q, want %q", st.Endpoint.Internal, want)
	}
	// No pod answers /varz in this suite: the version is the configured one,
	// and status says so.
	if st.ServerVersion != v1alpha1.DefaultVersion || st.ServerVersionSource != v1alpha1.VersionConfigured {
		t.Fatalf("server version = %q (%s), want %q (Configured)", st.ServerVersion, st.ServerVersionSource, v1alpha1.DefaultVersion)
	}
	if st.CredentialsSecretRef == nil || st.CredentialsSecretRef.Name != "nats-client" {
		t.Fatalf("credentialsSecretRef = %+v, want nats-client", st.CredentialsSecretRef)
	}
}

func TestPendingLoadBalancerIsAReasonNotAnEmptySuccess(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "edge", func(s *v1alpha1.NatsClusterSpec) {
		s.Service.Type = v1alpha1.ServiceType(corev1.ServiceTypeLoadBalancer)
	})
	create(t, c)
	serversReady(t, c)
	c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonLoadBalancerPending)
	if c.Status.Endpoint.External != "" {
		t.Fatalf("external endpoint = %q while the LoadBalancer is pending, want empty", c.Status.Endpoint.External)
	}

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}}
	get(t, svc)
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	if err := k8s.Status().Update(ctx(t), svc); err != nil {
		t.Fatal(err)
	}
	c = readyCondition(t, c, metav1.ConditionTrue, v1alpha1.ReasonReady)
	if want := "tls://203.0.113.7:4222"; c.Status.Endpoint.External != want {
		t.Fatalf("external endpoint = %q, want %q", c.Status.Endpoint.External, want)
	}
}
