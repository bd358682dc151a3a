package envtestmonitoring_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testns"
)

const wait = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// TestPodMonitorAppliedAndRemoved: with the Prometheus Operator's kinds
// served, a cluster with spec.monitoring gets its PodMonitor and
// PrometheusRule, as its children, MonitoringReady True; turning
// monitoring off removes both. Careless variant watched failing: leaving
// the kinds out of the pruned kinds keeps a PodMonitor scraping a port
// that is gone.
func TestPodMonitorAppliedAndRemoved(t *testing.T) {
	name := testns.Name(t)
	if err := k8s.Create(testCtx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "orders"}, Spec: v1alpha1.NatsClusterSpec{
		Replicas: ptr.To[int32](1), JetStream: v1alpha1.JetStreamSpec{Enabled: ptr.To(false)},
		Monitoring: &v1alpha1.MonitoringSpec{Enabled: true, PodMonitor: v1alpha1.PodMonitorSpec{Labels: map[string]string{"release": "prom"}}},
	}}
	if err := k8s.Create(testCtx(t), c); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: name, Name: c.PodMonitorName()}
	pm := &monitoringv1.PodMonitor{}
	poll.Until(t, wait, func() error { return k8s.Get(testCtx(t), key, pm) })
	if !metav1.IsControlledBy(pm, c) && (len(pm.OwnerReferences) == 0 || pm.OwnerReferences[0].Name != c.Name) {
		t.Errorf("PodMonitor owned by %+v", pm.OwnerReferences)
	}
	if pm.Labels["release"] != "prom" || *pm.Spec.PodMetricsEndpoints[0].Port != render.MetricsPortName {
		t.Errorf("PodMonitor %+v", pm)
	}
	rule := &monitoringv1.PrometheusRule{}
	poll.Until(t, wait, func() error { return k8s.Get(testCtx(t), key, rule) })
	if !strings.Contains(rule.Spec.Groups[0].Rules[0].Expr.String(), fmt.Sprintf("natscluster=%q", c.Name)) {
		t.Errorf("rule not scoped: %s", rule.Spec.Groups[0].Rules[0].Expr.String())
	}
	poll.Until(t, wait, func() error {
		if err := k8s.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if got := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMonitoringReady); got == nil || got.Status != metav1.ConditionTrue {
			return fmt.Errorf("MonitoringReady %+v", got)
		}
		return nil
	})

	c.Spec.Monitoring = nil
	if err := k8s.Update(testCtx(t), c); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		for _, obj := range []client.Object{&monitoringv1.PodMonitor{}, &monitoringv1.PrometheusRule{}} {
			if err := k8s.Get(testCtx(t), key, obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T still there (%v)", obj, err)
			}
		}
		return nil
	})
}
