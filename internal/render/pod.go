package render

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
)

// Pod annotations whose change restarts the servers on purpose.
const (
	// AnnotationConfigHash covers the nats.conf settings a reload cannot apply.
	AnnotationConfigHash = "kubenats.io/config-hash"
	// AnnotationCredentialsHash covers the credentials the servers read from
	// their environment at start.
	AnnotationCredentialsHash = "kubenats.io/credentials-hash"
	// AnnotationRouteTLS is the pod's route mode (RouteMode): "true" when
	// its routes use TLS, "false" for a password alone, "open" during a
	// takeover. A change of it cannot roll one server at a time (servers of
	// different modes do not route to each other): the rollout restarts
	// them all.
	AnnotationRouteTLS = "kubenats.io/route-tls"
	// AnnotationClientTLS says what the pod's client port serves:
	// plan.ClientTLSRequired, or plan.ClientTLSPlaintextAccepted
	// (allow_non_tls). A pod without it was started by a release before
	// client TLS by default; plan.ClientPlaintext and the operator's own
	// dials read it.
	AnnotationClientTLS = "kubenats.io/client-tls"
)

// RunAsUser is the unprivileged user every container runs as.
const RunAsUser = 65532

// terminationGracePeriod outlasts lame duck mode (LameDuckDuration) by 30 s,
// so that clients are moved away before the kubelet kills the server.
var terminationGracePeriod = int64(LameDuckDuration.Seconds()) + 30

// Inputs are what render needs beyond the spec, read from the cluster by the
// controller. The zero value is what `kubenats render` uses.
type Inputs struct {
	// ConfigHash is RenderedConf.RestartHash; Objects fills it in.
	ConfigHash string
	// CredentialsHash changes when the credentials in the Secrets change.
	CredentialsHash string
	// ClusterDomain is the DNS suffix of the cluster's Services, for the
	// names certificates carry; DefaultClusterDomain when empty.
	ClusterDomain string
	// Mesh is the stage of the mesh migration the objects carry; nil: the
	// end state spec.mesh asks for.
	Mesh *MeshStage
	// NativeSidecars says whether the cluster runs Istio's proxy as a
	// native sidecar (Kubernetes 1.33 and later); nil: unknown, Istio
	// decides.
	NativeSidecars *bool
	// ExporterImage is the image of the metrics container (the operator's
	// own); DefaultExporterImage when empty.
	ExporterImage string
	// NoPrometheusOperator: the controller found the Prometheus
	// Operator's CRDs missing, so no PodMonitor or PrometheusRule is
	// rendered. The zero value (kubenats render) renders them.
	NoPrometheusOperator bool
	// Trust are the trust Secret's values in mode jwt, read or made by the
	// controller; nats.conf carries their public part.
	Trust map[string]string
	// OperatorNamespace is where the operator runs, which the monitoring
	// ports' policy admits to the monitor port when spec.networkPolicy is
	// off; empty (kubenats render): spec.networkPolicy.operator's, by
	// default kubenats-system.
	OperatorNamespace string
	// SpreadZones: the controller found the servers' nodes in enough
	// zones (plan.SpreadReplicasOverZones), and nats.conf keeps a stream's
	// replicas in different zones. False (kubenats render): placement is
	// the servers' own.
	SpreadZones bool
}

func podTemplate(c *v1alpha1.NatsCluster, in Inputs) corev1.PodTemplateSpec {
	spec := c.Spec.PodTemplate
	annotations := maps.Clone(spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationConfigHash] = in.ConfigHash
	annotations[AnnotationRouteTLS] = RouteMode(c)
	annotations[AnnotationClientTLS] = plan.ClientTLSRequired
	if c.Spec.AcceptsPlaintextClients() {
		annotations[AnnotationClientTLS] = plan.ClientTLSPlaintextAccepted
	}
	delete(annotations, AnnotationCredentialsHash)
	if in.CredentialsHash != "" {
		annotations[AnnotationCredentialsHash] = in.CredentialsHash
	}
	pt := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels(c), Annotations: annotations},
		Spec: corev1.PodSpec{
			ServiceAccountName:            ServiceAccount(c).Name,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To(terminationGracePeriod),
			SecurityContext:               podSecurityContext(),
			Containers:                    containers(c, in),
			Volumes:                       volumes(c),
			NodeSelector:                  spec.NodeSelector,
			Tolerations:                   spec.Tolerations,
			Affinity:                      spec.Affinity,
			TopologySpreadConstraints:     spread(c),
			PriorityClassName:             spec.PriorityClassName,
			ImagePullSecrets:              spec.ImagePullSecrets,
		},
	}
	if meshStage(c, in).Sidecars {
		meshPod(&pt, in)
	}
	return pt
}

// containers are the server and, with spec.monitoring, its metrics
// container.
func containers(c *v1alpha1.NatsCluster, in Inputs) []corev1.Container {
	out := []corev1.Container{serverContainer(c)}
	if c.Spec.MonitoringEnabled() {
		out = append(out, metricsContainer(c, in))
	}
	return out
}

// spread keeps servers in different zones and on different nodes where it
// can, without refusing to schedule where it cannot.
func spread(c *v1alpha1.NatsCluster) []corev1.TopologySpreadConstraint {
	if tsc := c.Spec.PodTemplate.TopologySpreadConstraints; len(tsc) > 0 {
		return tsc
	}
	// Zones first: a zone's loss is the larger one to survive.
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelTopologyZone,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: SelectorLabels(c)},
	}, {
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: SelectorLabels(c)},
	}}
}

func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr.To(true),
		RunAsUser:           ptr.To[int64](RunAsUser),
		RunAsGroup:          ptr.To[int64](RunAsUser),
		FSGroup:             ptr.To[int64](RunAsUser),
		FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurityContext is the hardening of every container.
func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Volume names in the pod.
const (
	configVolume = "config"
	pidVolume    = "pid"
)

// PidDirSizeLimit bounds the pid directory, the one writable directory
// of a read-only root filesystem. nats-server writes a pid file of a few
// bytes there; without a limit, an image that is not nats-server
// (spec.image is the tenant's) could fill the node's disk through it, and
// the kubelet would evict other tenants' pods first. Past the limit the
// kubelet evicts this pod.
var PidDirSizeLimit = resource.MustParse("1Mi")

func volumes(c *v1alpha1.NatsCluster) []corev1.Volume {
	tlsVols, _ := tlsVolumes(c)
	return append([]corev1.Volume{
		{Name: configVolume, VolumeSource: corev1.VolumeSource{Projected: configProjection(c)}},
		{Name: pidVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(PidDirSizeLimit)}}},
	}, append(tlsVols, metricsVolumes(c)...)...)
}

// configProjection puts nats.conf (the ConfigMap) and, in mode users,
// users.conf (the users Secret) in one directory, which the kubelet
// refreshes as a whole: a reload then reads both as they were at one
// refresh. Each still comes from the kubelet's own copy of its object,
// which may lag the other's; the metadata each file carries
// (MetadataConfigKey, MetadataUsersKey) tells the operator what was read.
func configProjection(c *v1alpha1.NatsCluster) *corev1.ProjectedVolumeSource {
	sources := []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: c.ConfigMapName()},
		Items:                []corev1.KeyToPath{{Key: ConfigKey, Path: ConfigKey}},
	}}}
	if c.HasUsersFile() {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: c.UsersSecretName()},
			Items:                []corev1.KeyToPath{{Key: UsersConfKey, Path: UsersConfKey}},
		}})
	}
	sources = append(sources, leafnodesProjection(c)...)
	return &corev1.ProjectedVolumeSource{Sources: sources}
}
