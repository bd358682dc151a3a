package envtest_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestMonitoringValidation sends nonsense to the real API server and checks
// the message a user reads.
func TestMonitoringValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	peer := v1alpha1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}}
	for _, tc := range []struct {
		name string
		m    v1alpha1.MonitoringSpec
		want []string
	}{
		{"series-bound-too-small", v1alpha1.MonitoringSpec{Enabled: true, MaxSeriesPerServer: 5}, []string{"spec.monitoring.maxSeriesPerServer", "greater than or equal to 100"}},
		{"interval-not-a-duration", v1alpha1.MonitoringSpec{Enabled: true, PodMonitor: v1alpha1.PodMonitorSpec{Interval: "often"}}, []string{"spec.monitoring.podMonitor.interval", "should match"}},
		{"labels-ours", v1alpha1.MonitoringSpec{Enabled: true, PodMonitor: v1alpha1.PodMonitorSpec{Labels: map[string]string{"app.kubernetes.io/name": "x"}}}, []string{"podMonitor.labels may not set app.kubernetes.io/ labels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			err := k8s.Create(ctx(t), natsCluster(ns, tc.name, func(s *v1alpha1.NatsClusterSpec) { s.Monitoring = &m }))
			assertInvalid(t, err, tc.want...)
		})
	}
	// monitoring.from needs no spec.networkPolicy: without one, the
	// monitoring ports' policy admits the metrics port from these peers.
	open := natsCluster(ns, "from-without-networkpolicy", func(s *v1alpha1.NatsClusterSpec) {
		s.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true, From: []v1alpha1.NetworkPolicyPeer{peer}}
	})
	if err := k8s.Create(ctx(t), open, client.DryRunAll); err != nil {
		t.Errorf("monitoring.from without spec.networkPolicy: %v, want it accepted", err)
	}
}

// TestMonitoringDefaultsAgree: the API server defaults spec.monitoring as
// WithDefaults does, which `kubenats render` relies on.
func TestMonitoringDefaultsAgree(t *testing.T) {
	t.Parallel()
	c := natsCluster(namespace(t), "defaults", func(s *v1alpha1.NatsClusterSpec) { s.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true} })
	local := c.WithDefaults().Spec.Monitoring
	create(t, c)
	get(t, c)
	got := c.Spec.Monitoring
	if *got.PodMonitor.Enabled != *local.PodMonitor.Enabled || got.PodMonitor.Interval != local.PodMonitor.Interval || got.MaxSeriesPerServer != local.MaxSeriesPerServer {
		t.Fatalf("API server defaults %+v, WithDefaults %+v", got, local)
	}
}

// TestMonitoringWithoutPrometheusOperator: envtest has no Prometheus
// Operator CRDs. The servers still get their metrics containers and the
// headless Service its metrics port, and MonitoringReady says why there is
// no PodMonitor. Careless variant watched failing: applying the PodMonitor
// regardless fails the pass with "no matches for kind PodMonitor" and
// the StatefulSet is never updated.
func TestMonitoringWithoutPrometheusOperator(t *testing.T) {
	t.Parallel()
	c := natsCluster(namespace(t), "metrics", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.JetStream.Enabled = ptr.To(false)
		s.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true}
	})
	create(t, c)
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		got := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMonitoringReady)
		if got == nil || got.Status != metav1.ConditionFalse || got.Reason != v1alpha1.ReasonPodMonitorCRDMissing {
			return fmt.Errorf("MonitoringReady %+v", got)
		}
		return nil
	})
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.StatefulSetName()}}
	get(t, sts)
	found := false
	for _, ctr := range sts.Spec.Template.Spec.Containers {
		found = found || ctr.Name == render.MetricsContainerName
	}
	if !found {
		t.Fatal("no metrics container in the StatefulSet")
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.HeadlessServiceName()}}
	get(t, svc)
	for _, p := range svc.Spec.Ports {
		if p.Name == render.MetricsPortName {
			return
		}
	}
	t.Fatalf("no metrics port on %s: %+v", svc.Name, svc.Spec.Ports)
}
