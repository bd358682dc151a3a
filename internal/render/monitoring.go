package render

import (
	"strconv"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/alerts"
	"github.com/kubenats/kubenats/internal/release"
)

// The metrics container (spec.monitoring): the operator's image running
// `kubenats exporter`, which reads the server's monitor port over the
// pod's loopback and serves Prometheus text on MetricsPort.
const (
	MetricsContainerName = "metrics"
	MetricsPortName      = "metrics"
	MetricsPort          = 7777
	// DefaultExporterImage is the operator's own released image
	// (release.Image); the operator passes the image it runs from
	// (Inputs.ExporterImage).
	DefaultExporterImage = release.Image
	metricsTLSVolume     = "metrics-tls"
	metricsTLSDir        = "/etc/kubenats-metrics/tls"
)

// Prometheus Operator kinds kubenats renders.
const (
	MonitoringAPIVersion = "monitoring.coreos.com/v1"
	PodMonitorKind       = "PodMonitor"
	PrometheusRuleKind   = "PrometheusRule"
)

// exporterResources: the exporter holds one /jsz answer's streams at a
// time, a few MiB for thousands of streams.
var exporterResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
}

// exporterImage is the image of the metrics container.
func exporterImage(in Inputs) string {
	if in.ExporterImage != "" {
		return in.ExporterImage
	}
	return DefaultExporterImage
}

// metricsContainer reads the server's monitor port over loopback: no
// Service, no NetworkPolicy and no mesh stands between them. It gets no
// service account token (the pod has none), no secret in its arguments,
// and with monitor TLS only the CA, plus the server's own certificate
// when the client port verifies clients (nats-server serves https
// monitoring with the client TLS settings, verify included).
//
// It has no readiness probe on purpose: a pod is Ready only when every
// container is, and a metrics container that stumbles must not take its
// server out of the Services or hold a rollout.
func metricsContainer(c *v1alpha1.NatsCluster, in Inputs) corev1.Container {
	scheme := "http"
	args := []string{"exporter",
		"-listen=:" + strconv.Itoa(MetricsPort),
		"-namespace=" + c.Namespace,
		"-natscluster=" + c.Name,
		"-max-series=" + strconv.Itoa(int(c.Spec.Monitoring.MaxSeriesPerServerOrDefault())),
	}
	var mounts []corev1.VolumeMount
	if c.Spec.MonitorTLSEnabled() {
		scheme = "https"
		args = append(args,
			"-tls-ca="+metricsTLSDir+"/"+TLSCAKey,
			// The certificate carries the headless Service's wildcard:
			// the server is verified under its pod's DNS name, as the
			// operator verifies it.
			"-tls-server-name=$("+EnvPodName+")."+c.HeadlessServiceName()+"."+c.Namespace+".svc")
		if c.Spec.ClientTLS().Verify {
			args = append(args, "-tls-cert="+metricsTLSDir+"/"+TLSCertKey, "-tls-key="+metricsTLSDir+"/"+TLSKeyKey)
		}
		mounts = append(mounts, corev1.VolumeMount{Name: metricsTLSVolume, MountPath: metricsTLSDir, ReadOnly: true})
	}
	args = append(args, "-monitor-url="+scheme+"://127.0.0.1:"+strconv.Itoa(MonitorPort))
	return corev1.Container{
		Name:            MetricsContainerName,
		Image:           exporterImage(in),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            args,
		Env: []corev1.EnvVar{{
			Name:      EnvPodName,
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}},
		}, {Name: "GOMEMLIMIT", Value: "50MiB"}},
		Ports:           []corev1.ContainerPort{{Name: MetricsPortName, ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}},
		Resources:       exporterResources,
		VolumeMounts:    mounts,
		SecurityContext: containerSecurityContext(),
	}
}

// metricsVolumes is the metrics container's view of the client
// certificate's Secret: ca.crt, and the pair only when clients must
// present one.
func metricsVolumes(c *v1alpha1.NatsCluster) []corev1.Volume {
	if !c.Spec.MonitoringEnabled() || !c.Spec.MonitorTLSEnabled() {
		return nil
	}
	items := []corev1.KeyToPath{{Key: TLSCAKey, Path: TLSCAKey}}
	if c.Spec.ClientTLS().Verify {
		items = append(items, corev1.KeyToPath{Key: TLSCertKey, Path: TLSCertKey}, corev1.KeyToPath{Key: TLSKeyKey, Path: TLSKeyKey})
	}
	return []corev1.Volume{{Name: metricsTLSVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: c.ClientTLSSecretName(), DefaultMode: ptr.To[int32](0o440), Items: items,
	}}}}
}

// monitoringLabels are a monitoring object's labels: ours, and the user's
// for the Prometheus that selects them.
func monitoringLabels(c *v1alpha1.NatsCluster) map[string]string {
	l := labels(c)
	for k, v := range c.Spec.Monitoring.PodMonitor.Labels {
		if _, ours := l[k]; !ours {
			l[k] = v
		}
	}
	return l
}

// What one scrape of the PodMonitor's targets may bring into Prometheus.
// Anyone who may create pods in the cluster's namespace can give a pod
// the server labels and a metrics port, which the PodMonitor then
// selects: these bounds keep such a pod (or an exporter gone wrong) from
// flooding a Prometheus the namespace shares with others. A scrape past a
// bound is refused whole by Prometheus (up is 0, the target says why).
const (
	// exporterSeriesBesideStreams bounds the series the exporter serves
	// besides the stream and consumer series spec.monitoring
	// .maxSeriesPerServer bounds: about 40 server series, 2 per meta
	// group replica (at most 99), 3 per account with JetStream (at most
	// 1024 read) and 2 more for the first 256 accounts' limits, one error
	// counter per monitor endpoint: under 4,300, doubled.
	exporterSeriesBesideStreams = 8192
	// scrapeLabelLimit: a consumer series has 16 labels and its name,
	// and Prometheus adds the target's (namespace, pod, container, job,
	// instance, endpoint).
	scrapeLabelLimit = 40
	// Label names are the exporter's own (under 32 characters); values
	// are names: server ids and account keys of 56 characters, stream and
	// consumer names (NATS allows 255 bytes; kubenats' own are shorter).
	scrapeLabelNameLengthLimit  = 64
	scrapeLabelValueLengthLimit = 512
	// keepDroppedTargets bounds the pods of the namespace Prometheus
	// remembers after dropping them for not matching: pod discovery lists
	// every pod of the namespace.
	keepDroppedTargets = 32
)

// scrapeSampleLimit is the most samples one server's metrics container
// serves in a scrape (spec.monitoring.maxSeriesPerServer and the rest).
func scrapeSampleLimit(c *v1alpha1.NatsCluster) int64 {
	return int64(c.Spec.Monitoring.MaxSeriesPerServerOrDefault()) + exporterSeriesBesideStreams
}

// scrapeTargetLimit is twice the servers: the cluster's pods, and room
// for pods that are not its own to be scraped beside them (each within
// the sample limit) rather than every target refused at once.
func scrapeTargetLimit(c *v1alpha1.NatsCluster) int64 {
	return 2 * int64(ptr.Deref(c.WithDefaults().Spec.Replicas, 1))
}

// PodMonitor has the Prometheus Operator scrape every server pod of c on
// its metrics port, in c's namespace only, each scrape within the bounds
// above. The exporter's own namespace label gives way to the one
// Prometheus attaches from the target (the pod's real namespace, which a
// tenant cannot choose): it would come back as exported_namespace, and is
// dropped.
func PodMonitor(c *v1alpha1.NatsCluster) *monitoringv1.PodMonitor {
	interval := monitoringv1.Duration(c.Spec.Monitoring.IntervalOrDefault())
	meta := objectMeta(c, c.PodMonitorName())
	meta.Labels = monitoringLabels(c)
	return &monitoringv1.PodMonitor{
		TypeMeta:   typeMeta(MonitoringAPIVersion, PodMonitorKind),
		ObjectMeta: meta,
		Spec: monitoringv1.PodMonitorSpec{
			Selector:              metav1.LabelSelector{MatchLabels: ManagedSelectorLabels(c)},
			NamespaceSelector:     monitoringv1.NamespaceSelector{MatchNames: []string{c.Namespace}},
			SampleLimit:           ptr.To(scrapeSampleLimit(c)),
			TargetLimit:           ptr.To(scrapeTargetLimit(c)),
			LabelLimit:            ptr.To[int64](scrapeLabelLimit),
			LabelNameLengthLimit:  ptr.To[int64](scrapeLabelNameLengthLimit),
			LabelValueLengthLimit: ptr.To[int64](scrapeLabelValueLengthLimit),
			KeepDroppedTargets:    ptr.To[int64](keepDroppedTargets),
			PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{
				Port:     ptr.To(MetricsPortName),
				Path:     "/metrics",
				Interval: interval,
				MetricRelabelConfigs: []monitoringv1.RelabelConfig{{
					Action: "labeldrop", Regex: "exported_namespace",
				}},
			}},
		},
	}
}

// PrometheusRule is the alerting rules scoped to c (package alerts).
func PrometheusRule(c *v1alpha1.NatsCluster) *monitoringv1.PrometheusRule {
	meta := objectMeta(c, c.PrometheusRuleName())
	meta.Labels = monitoringLabels(c)
	return &monitoringv1.PrometheusRule{
		TypeMeta:   typeMeta(MonitoringAPIVersion, PrometheusRuleKind),
		ObjectMeta: meta,
		Spec:       monitoringv1.PrometheusRuleSpec{Groups: alerts.Groups(c.Namespace, c.Name)},
	}
}

// monitoringObjects are the Prometheus Operator objects c asks for, unless
// the controller found the Prometheus Operator's CRDs missing.
func monitoringObjects(c *v1alpha1.NatsCluster, in Inputs) []client.Object {
	if in.NoPrometheusOperator {
		return nil
	}
	var out []client.Object
	if c.Spec.PodMonitorEnabled() {
		out = append(out, PodMonitor(c))
	}
	if c.Spec.PrometheusRuleEnabled() {
		out = append(out, PrometheusRule(c))
	}
	return out
}
