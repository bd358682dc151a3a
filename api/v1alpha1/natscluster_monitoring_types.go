package v1alpha1

// Defaults of spec.monitoring that the CRD's markers also declare; an
// envtest case checks that they agree.
const (
	DefaultMonitoringInterval = "30s"
	DefaultMaxSeriesPerServer = 10000
)

// MonitoringSpec turns on Prometheus metrics for the cluster's servers: a
// metrics container in every server pod (the operator's own image, running
// `kubenats exporter`) reads its server's monitor port over the pod's
// loopback and serves the series prometheus-nats-exporter would serve with
// -prefix=nats, on port 7777 named metrics. Collection is per pod, so a
// reader who may see this namespace's targets sees this cluster's series
// and no other namespace's. Off unless enabled.
type MonitoringSpec struct {
	// Enabled adds the metrics container, the metrics port on the headless
	// Service and, where the Prometheus Operator is installed, a
	// PodMonitor and a PrometheusRule named after the cluster.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// PodMonitor shapes the PodMonitor. It is rendered whenever monitoring
	// is enabled, unless podMonitor.enabled is false.
	// +kubebuilder:default={}
	// +optional
	PodMonitor PodMonitorSpec `json:"podMonitor,omitempty"`

	// PrometheusRule adds the alerting rules (docs/monitoring.md) as a
	// PrometheusRule <name>, scoped to this cluster. On unless false.
	// +optional
	PrometheusRule *bool `json:"prometheusRule,omitempty"`

	// MaxSeriesPerServer bounds the stream and consumer series one server's
	// metrics container serves per scrape (server series are always
	// served); the cluster serves at most replicas times as many. Whole
	// streams (with their consumers) past the bound are left out, in order
	// of account and name, and counted in
	// kubenats_exporter_series_dropped_total.
	// +kubebuilder:default=10000
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	MaxSeriesPerServer int32 `json:"maxSeriesPerServer,omitempty"`

	// From may reach the metrics port 7777, through the NetworkPolicy
	// spec.networkPolicy enables or, without it, the one that guards the
	// monitor and metrics ports alone (<name>-monitoring-ports). Unset: no
	// one but pods of the cluster's own namespace, so that a Prometheus
	// elsewhere must be listed here on purpose. A peer follows
	// NetworkPolicy's rules: a podSelector alone selects pods in the
	// cluster's own namespace.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	From []NetworkPolicyPeer `json:"from,omitempty"`
}

// PodMonitorSpec shapes the PodMonitor.
type PodMonitorSpec struct {
	// Enabled renders the PodMonitor (the default).
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Interval between scrapes, as Prometheus writes durations.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Pattern=`^[0-9]+(ms|s|m|h)$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Interval string `json:"interval,omitempty"`

	// Labels added to the PodMonitor and the PrometheusRule, for the
	// Prometheus that selects them (release: kube-prometheus-stack, ...).
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="!self.exists(k, k.startsWith('app.kubernetes.io/'))",message="podMonitor.labels may not set app.kubernetes.io/ labels: the operator owns them"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// MonitoringEnabled reports whether c serves metrics.
func (s *NatsClusterSpec) MonitoringEnabled() bool {
	return s.Monitoring != nil && s.Monitoring.Enabled
}

// PodMonitorEnabled reports whether c wants a PodMonitor.
func (s *NatsClusterSpec) PodMonitorEnabled() bool {
	if !s.MonitoringEnabled() {
		return false
	}
	e := s.Monitoring.PodMonitor.Enabled
	return e == nil || *e
}

// PrometheusRuleEnabled reports whether c wants its PrometheusRule.
func (s *NatsClusterSpec) PrometheusRuleEnabled() bool {
	if !s.MonitoringEnabled() {
		return false
	}
	e := s.Monitoring.PrometheusRule
	return e == nil || *e
}

// MaxSeriesPerServerOrDefault is spec.monitoring.maxSeriesPerServer, defaulted.
func (m *MonitoringSpec) MaxSeriesPerServerOrDefault() int32 {
	if m == nil || m.MaxSeriesPerServer == 0 {
		return DefaultMaxSeriesPerServer
	}
	return m.MaxSeriesPerServer
}

// IntervalOrDefault is spec.monitoring.podMonitor.interval, defaulted.
func (m *MonitoringSpec) IntervalOrDefault() string {
	if m == nil || m.PodMonitor.Interval == "" {
		return DefaultMonitoringInterval
	}
	return m.PodMonitor.Interval
}
