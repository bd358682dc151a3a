package promserver

import (
	"fmt"
	"regexp"
	"sort"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// Config is the part of prometheus.yml the tests write.
type Config struct {
	Global        Global         `json:"global"`
	RuleFiles     []string       `json:"rule_files,omitempty"`
	ScrapeConfigs []ScrapeConfig `json:"scrape_configs"`
}

// Global holds the intervals every job and rule group defaults to.
type Global struct {
	ScrapeInterval     string `json:"scrape_interval"`
	ScrapeTimeout      string `json:"scrape_timeout"`
	EvaluationInterval string `json:"evaluation_interval"`
}

// ScrapeConfig is one job.
type ScrapeConfig struct {
	JobName              string          `json:"job_name"`
	ScrapeInterval       string          `json:"scrape_interval,omitempty"`
	ScrapeTimeout        string          `json:"scrape_timeout,omitempty"`
	MetricsPath          string          `json:"metrics_path,omitempty"`
	Scheme               string          `json:"scheme,omitempty"`
	Authorization        *Authorization  `json:"authorization,omitempty"`
	TLSConfig            *TLSConfig      `json:"tls_config,omitempty"`
	HonorLabels          bool            `json:"honor_labels"`
	KubernetesSDConfigs  []KubernetesSD  `json:"kubernetes_sd_configs,omitempty"`
	StaticConfigs        []StaticConfig  `json:"static_configs,omitempty"`
	RelabelConfigs       []RelabelConfig `json:"relabel_configs,omitempty"`
	MetricRelabelConfigs []RelabelConfig `json:"metric_relabel_configs,omitempty"`
	// The scrape's bounds, as the Prometheus Operator carries a
	// PodMonitor's: a scrape past one is refused whole.
	SampleLimit           int64 `json:"sample_limit,omitempty"`
	TargetLimit           int64 `json:"target_limit,omitempty"`
	LabelLimit            int64 `json:"label_limit,omitempty"`
	LabelNameLengthLimit  int64 `json:"label_name_length_limit,omitempty"`
	LabelValueLengthLimit int64 `json:"label_value_length_limit,omitempty"`
	KeepDroppedTargets    int64 `json:"keep_dropped_targets,omitempty"`
}

// Authorization sends the token in a file as a bearer token.
type Authorization struct {
	CredentialsFile string `json:"credentials_file"`
}

// TLSConfig is how a job checks the target's certificate.
type TLSConfig struct {
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// StaticConfig is a fixed list of targets.
type StaticConfig struct {
	Targets []string `json:"targets"`
}

// KubernetesSD is a kubernetes_sd_configs entry reaching the API server
// through a kubeconfig file: the identity in it is the one whose RBAC the
// discovery lives with.
type KubernetesSD struct {
	Role           string      `json:"role"`
	KubeconfigFile string      `json:"kubeconfig_file"`
	Namespaces     *Namespaces `json:"namespaces,omitempty"`
}

// Namespaces limits discovery to the named namespaces.
type Namespaces struct {
	Names []string `json:"names"`
}

// RelabelConfig is one relabelling step.
type RelabelConfig struct {
	SourceLabels []string `json:"source_labels,omitempty"`
	Separator    string   `json:"separator,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	TargetLabel  string   `json:"target_label,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// Discovery is how a job finds its pods: through kubeconfig, in the
// namespaces the PodMonitors name.
type Discovery struct {
	Kubeconfig string
	// Interval replaces the PodMonitor's own (30 s by default), so that a
	// test sees a change within seconds; zero keeps it.
	Interval time.Duration
}

// notLabelChar is what Prometheus turns into "_" in the
// __meta_kubernetes_pod_label_<name> of a pod label.
var notLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// PodMonitorJob is the job a Prometheus Operator makes of pm: pods in pm's
// namespaces whose labels match its selector, on its endpoint's named
// container port, with the target's namespace, pod and container as
// labels, pm's metric relabelling and its scrape bounds. It covers what kubenats renders
// (match labels, named namespaces, one endpoint with a port name) and
// refuses the rest rather than scrape something else than pm selects.
func PodMonitorJob(pm *monitoringv1.PodMonitor, d Discovery) (ScrapeConfig, error) {
	if len(pm.Spec.Selector.MatchExpressions) > 0 || pm.Spec.NamespaceSelector.Any || len(pm.Spec.NamespaceSelector.MatchNames) == 0 {
		return ScrapeConfig{}, fmt.Errorf("podmonitor %s/%s: only match labels in named namespaces are translated", pm.Namespace, pm.Name)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 || pm.Spec.PodMetricsEndpoints[0].Port == nil {
		return ScrapeConfig{}, fmt.Errorf("podmonitor %s/%s: want one endpoint with a port name", pm.Namespace, pm.Name)
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	job := ScrapeConfig{
		JobName:     "podMonitor/" + pm.Namespace + "/" + pm.Name + "/0",
		MetricsPath: ep.Path,
		KubernetesSDConfigs: []KubernetesSD{{Role: "pod", KubeconfigFile: d.Kubeconfig,
			Namespaces: &Namespaces{Names: append([]string(nil), pm.Spec.NamespaceSelector.MatchNames...)}}},
	}
	// The Prometheus Operator carries honorLabels as it is: a PodMonitor
	// that set it would let a target's own labels win over the target's.
	job.HonorLabels = ep.HonorLabels
	if ep.Interval != "" {
		job.ScrapeInterval = string(ep.Interval)
	}
	deref := func(v *int64) int64 {
		if v == nil {
			return 0
		}
		return *v
	}
	job.SampleLimit, job.TargetLimit = deref(pm.Spec.SampleLimit), deref(pm.Spec.TargetLimit)
	job.LabelLimit, job.LabelNameLengthLimit = deref(pm.Spec.LabelLimit), deref(pm.Spec.LabelNameLengthLimit)
	job.LabelValueLengthLimit, job.KeepDroppedTargets = deref(pm.Spec.LabelValueLengthLimit), deref(pm.Spec.KeepDroppedTargets)
	if d.Interval > 0 {
		job.ScrapeInterval = d.Interval.String()
	}
	keys := make([]string, 0, len(pm.Spec.Selector.MatchLabels))
	for k := range pm.Spec.Selector.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		job.RelabelConfigs = append(job.RelabelConfigs, RelabelConfig{Action: "keep",
			SourceLabels: []string{"__meta_kubernetes_pod_label_" + notLabelChar.ReplaceAllString(k, "_")},
			Regex:        regexp.QuoteMeta(pm.Spec.Selector.MatchLabels[k])})
	}
	job.RelabelConfigs = append(job.RelabelConfigs,
		RelabelConfig{Action: "keep", SourceLabels: []string{"__meta_kubernetes_pod_container_port_name"}, Regex: regexp.QuoteMeta(*ep.Port)},
		// Finished pods keep their address in the API for a while.
		RelabelConfig{Action: "drop", SourceLabels: []string{"__meta_kubernetes_pod_phase"}, Regex: "(Failed|Succeeded)"},
		RelabelConfig{SourceLabels: []string{"__meta_kubernetes_namespace"}, TargetLabel: "namespace"},
		RelabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_name"}, TargetLabel: "pod"},
		RelabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_container_name"}, TargetLabel: "container"},
		RelabelConfig{TargetLabel: "job", Replacement: ptr(pm.Namespace + "/" + pm.Name)},
	)
	for _, r := range ep.MetricRelabelConfigs {
		out := RelabelConfig{Action: r.Action, Regex: r.Regex, TargetLabel: r.TargetLabel, Replacement: r.Replacement}
		for _, l := range r.SourceLabels {
			out.SourceLabels = append(out.SourceLabels, string(l))
		}
		job.MetricRelabelConfigs = append(job.MetricRelabelConfigs, out)
	}
	return job, nil
}

func ptr[T any](v T) *T { return &v }
