package promserver

import (
	"slices"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodMonitorJobKeepsWhatThePodMonitorSelects: the job made of the
// PodMonitor render writes discovers in the cluster's namespace only,
// keeps pods by every selector label and the metrics port by name, sets
// the target's namespace, and carries the metric relabelling (the
// exporter's own namespace label dropped). Careless variant watched
// failing: discovery without the namespace list (every namespace the
// identity may list, which is what the isolation test relies on not
// happening).
func TestPodMonitorJobKeepsWhatThePodMonitorSelects(t *testing.T) {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "orders"},
		Spec: v1alpha1.NatsClusterSpec{Monitoring: &v1alpha1.MonitoringSpec{Enabled: true}}}
	pm := render.PodMonitor(c)
	job, err := PodMonitorJob(pm, Discovery{Kubeconfig: "/k", Interval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(job.KubernetesSDConfigs) != 1 || job.KubernetesSDConfigs[0].Role != "pod" || job.KubernetesSDConfigs[0].Namespaces == nil ||
		!slices.Equal(job.KubernetesSDConfigs[0].Namespaces.Names, []string{"team-a"}) {
		t.Fatalf("discovery %+v, want role pod in team-a only", job.KubernetesSDConfigs)
	}
	if job.ScrapeInterval != "2s" || job.MetricsPath != "/metrics" {
		t.Errorf("interval %q path %q", job.ScrapeInterval, job.MetricsPath)
	}
	keeps := map[string]string{}
	targets := map[string]string{}
	for _, r := range job.RelabelConfigs {
		switch {
		case r.Action == "keep":
			keeps[strings.Join(r.SourceLabels, ";")] = r.Regex
		case r.TargetLabel != "" && len(r.SourceLabels) == 1:
			targets[r.TargetLabel] = r.SourceLabels[0]
		}
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		label := "__meta_kubernetes_pod_label_" + notLabelChar.ReplaceAllString(k, "_")
		if _, ok := keeps[label]; !ok {
			t.Errorf("no keep on %s (selector %s=%s)", label, k, v)
		}
	}
	if keeps["__meta_kubernetes_pod_container_port_name"] != render.MetricsPortName {
		t.Errorf("port keep %q, want %q", keeps["__meta_kubernetes_pod_container_port_name"], render.MetricsPortName)
	}
	if targets["namespace"] != "__meta_kubernetes_namespace" {
		t.Errorf("namespace label from %q", targets["namespace"])
	}
	if len(job.MetricRelabelConfigs) != 1 || job.MetricRelabelConfigs[0].Action != "labeldrop" || job.MetricRelabelConfigs[0].Regex != "exported_namespace" {
		t.Errorf("metric relabelling %+v", job.MetricRelabelConfigs)
	}
	// The PodMonitor's scrape bounds are the job's, so that the real
	// Prometheus of the e2e tests scrapes under them.
	if job.SampleLimit != *pm.Spec.SampleLimit || job.TargetLimit != *pm.Spec.TargetLimit || job.LabelLimit != *pm.Spec.LabelLimit ||
		job.LabelNameLengthLimit != *pm.Spec.LabelNameLengthLimit || job.LabelValueLengthLimit != *pm.Spec.LabelValueLengthLimit ||
		job.KeepDroppedTargets != *pm.Spec.KeepDroppedTargets {
		t.Errorf("scrape bounds %+v, want the PodMonitor's", job)
	}
}

// TestPodMonitorJobRefusesWhatItCannotTranslate: a selection it would
// widen or narrow is an error, not a different job.
func TestPodMonitorJobRefusesWhatItCannotTranslate(t *testing.T) {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "orders"},
		Spec: v1alpha1.NatsClusterSpec{Monitoring: &v1alpha1.MonitoringSpec{Enabled: true}}}
	for name, edit := range map[string]func(*monitoringv1.PodMonitor){
		"any namespace": func(pm *monitoringv1.PodMonitor) { pm.Spec.NamespaceSelector.Any = true },
		"match expressions": func(pm *monitoringv1.PodMonitor) {
			pm.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Exists"}}
		},
		"no endpoint": func(pm *monitoringv1.PodMonitor) { pm.Spec.PodMetricsEndpoints = nil },
	} {
		pm := render.PodMonitor(c)
		edit(pm)
		if _, err := PodMonitorJob(pm, Discovery{}); err == nil {
			t.Errorf("%s: translated", name)
		}
	}
}
