package natscluster

import (
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors;prometheusrules,verbs=get;list;watch;create;patch;delete

// PodMonitorGroupKind is the Prometheus Operator's PodMonitor.
var PodMonitorGroupKind = schema.GroupKind{Group: "monitoring.coreos.com", Kind: render.PodMonitorKind}

// monitoringKinds are the optional kinds pruned while the Prometheus
// Operator's CRDs are installed (a list of a kind the API server does not
// serve fails).
var monitoringKinds = []func() client.ObjectList{
	func() client.ObjectList { return &monitoringv1.PodMonitorList{} },
	func() client.ObjectList { return &monitoringv1.PrometheusRuleList{} },
}

// monitoringVerdict is the MonitoringReady condition of c, nil without
// spec.monitoring: the metrics containers run either way; what the
// condition tells is whether a Prometheus Operator will find them.
func monitoringVerdict(c *v1alpha1.NatsCluster, installed bool) *status.Verdict {
	if !c.Spec.MonitoringEnabled() {
		return nil
	}
	v := &status.Verdict{Type: v1alpha1.ConditionMonitoringReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonMonitoringReady}
	wantsObjects := c.Spec.PodMonitorEnabled() || c.Spec.PrometheusRuleEnabled()
	switch {
	case !wantsObjects:
		v.Message = fmt.Sprintf("every server serves metrics on port %d; no PodMonitor asked for", render.MetricsPort)
	case !installed:
		v.Status, v.Reason = metav1.ConditionFalse, v1alpha1.ReasonPodMonitorCRDMissing
		v.Message = fmt.Sprintf("the Prometheus Operator's CRDs (%s) are not installed: no PodMonitor or PrometheusRule; every server still serves metrics on port %d", PodMonitorGroupKind, render.MetricsPort)
	default:
		v.Message = fmt.Sprintf("PodMonitor %s selects every server's metrics port", c.PodMonitorName())
	}
	return v
}
