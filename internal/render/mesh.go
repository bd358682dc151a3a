package render

import (
	"encoding/json"
	"fmt"
	"time"

	securityapi "istio.io/api/security/v1beta1"
	typeapi "istio.io/api/type/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// What Istio reads from a pod (names from istio.io/istio's injector).
const (
	// LabelIstioInject opts a pod in to sidecar injection.
	LabelIstioInject = "sidecar.istio.io/inject"
	// AnnotationIstioNativeSidecar: "true" puts istio-proxy among the init
	// containers with restartPolicy Always (a native sidecar, Kubernetes
	// 1.33 and later), "false" among the containers. It overrides Istio's
	// own choice.
	AnnotationIstioNativeSidecar = "sidecar.istio.io/nativeSidecar"
	// AnnotationIstioProxyConfig holds the pod's ProxyConfig overrides.
	AnnotationIstioProxyConfig = "proxy.istio.io/config"
	// AnnotationIstioStatus is what the injector writes into a pod it gave
	// a sidecar.
	AnnotationIstioStatus = "sidecar.istio.io/status"
	// IstioProxyContainer is the sidecar's container name.
	IstioProxyContainer = "istio-proxy"
	// IstioProxyUID is the user the proxy runs as; iptables lets its
	// traffic pass uncaptured, so an application running as it would
	// bypass the mesh.
	IstioProxyUID = 1337
)

// PeerAuthentication, the one Istio object kubenats renders.
const (
	PeerAuthenticationAPIVersion = "security.istio.io/v1"
	PeerAuthenticationKind       = "PeerAuthentication"
)

// Istio's mTLS mode names, as PeerAuthentication spells them.
const (
	MeshPolicyPermissive = "PERMISSIVE"
	MeshPolicyStrict     = "STRICT"
)

// MeshStage is where the controller's staged migration stands: whether
// the pods carry sidecars yet and which PeerAuthentication mode applies
// ("" for none). Nil in Inputs means the end state the spec asks for,
// which is what `kubenats render` prints.
type MeshStage struct {
	Sidecars bool
	Policy   string
	// RolledBackGeneration is recorded on the policy after a rollback from
	// STRICT: the spec generation that STRICT failed for; RolledBackFor the
	// kind of fault (plan.MeshFault), which says whether the operator
	// tries again once the fault is gone or only once the spec changes.
	RolledBackGeneration int64
	RolledBackFor        string
}

// AnnotationMeshRolledBack and AnnotationMeshRolledBackFor carry
// MeshStage.RolledBackGeneration and RolledBackFor on the
// PeerAuthentication.
const (
	AnnotationMeshRolledBack    = "kubenats.io/mesh-rolled-back-generation"
	AnnotationMeshRolledBackFor = "kubenats.io/mesh-rolled-back-for"
)

// proxyDrainMargin is how long the proxy outlives the end of lame duck.
const proxyDrainMargin = 10 * time.Second

// ProxyDrainDuration is the sidecar's terminationDrainDuration: a proxy
// that is not a native sidecar gets SIGTERM together with nats-server and
// must keep the network up through the whole lame duck (grace period,
// then the clients moved away), and a little longer.
var ProxyDrainDuration = LameDuckGracePeriod + LameDuckDuration + proxyDrainMargin

// meshStage is the stage the objects of c carry.
func meshStage(c *v1alpha1.NatsCluster, in Inputs) MeshStage {
	if in.Mesh != nil {
		return *in.Mesh
	}
	m := c.Spec.IstioMesh()
	if m == nil {
		return MeshStage{}
	}
	policy := MeshPolicyStrict
	if m.MTLSMode() == v1alpha1.MeshMTLSPermissive {
		policy = MeshPolicyPermissive
	}
	return MeshStage{Sidecars: true, Policy: policy}
}

// meshPod asks Istio for a sidecar in the pod: the injection label, the
// native sidecar choice when the controller knows what the cluster
// supports, and a proxy that holds the application until it runs. A
// classic sidecar gets SIGTERM with nats-server, so it drains no sooner
// than lame duck ends, within the pod's grace period. A native sidecar
// stops only once nats-server has exited: a long drain would only delay
// the pod's end, so Istio's default stays.
func meshPod(pt *corev1.PodTemplateSpec, in Inputs) {
	pt.Labels[LabelIstioInject] = "true"
	native := in.NativeSidecars != nil && *in.NativeSidecars
	if in.NativeSidecars != nil {
		pt.Annotations[AnnotationIstioNativeSidecar] = fmt.Sprint(native)
	}
	cfg := map[string]any{"holdApplicationUntilProxyStarts": true}
	if !native {
		cfg["terminationDrainDuration"] = ProxyDrainDuration.String()
		grace := int64((ProxyDrainDuration + proxyDrainMargin).Seconds())
		if *pt.Spec.TerminationGracePeriodSeconds < grace {
			pt.Spec.TerminationGracePeriodSeconds = &grace
		}
	}
	text, _ := json.Marshal(cfg)
	pt.Annotations[AnnotationIstioProxyConfig] = string(text)
}

// PeerAuthentication sets the mTLS mode of c's servers: its selector is
// exactly the labels of c's pods, managed-by included, never a namespace,
// the mesh or a namesake's pods. The monitor port gets a PERMISSIVE
// exception only when spec.mesh.istio.monitorPermissive asks for it: the
// exception would loosen whatever the platform enforces for the
// namespace, for a port whose endpoints describe every connection. (HTTP
// speaks first from the client, so a plaintext scraper is then detected
// and served; the probes reach the server through the agent on 15020, not
// this port, and need no exception.)
func PeerAuthentication(c *v1alpha1.NatsCluster, stage MeshStage) *securityv1.PeerAuthentication {
	mode := securityapi.PeerAuthentication_MutualTLS_PERMISSIVE
	if stage.Policy == MeshPolicyStrict {
		mode = securityapi.PeerAuthentication_MutualTLS_STRICT
	}
	pa := &securityv1.PeerAuthentication{
		TypeMeta:   typeMeta(PeerAuthenticationAPIVersion, PeerAuthenticationKind),
		ObjectMeta: objectMeta(c, c.PeerAuthenticationName()),
		Spec: securityapi.PeerAuthentication{
			Selector: &typeapi.WorkloadSelector{MatchLabels: ManagedSelectorLabels(c)},
			Mtls:     &securityapi.PeerAuthentication_MutualTLS{Mode: mode},
		},
	}
	levels := map[uint32]*securityapi.PeerAuthentication_MutualTLS{}
	if m := c.Spec.IstioMesh(); m != nil && m.MonitorPermissive {
		levels[MonitorPort] = &securityapi.PeerAuthentication_MutualTLS{Mode: securityapi.PeerAuthentication_MutualTLS_PERMISSIVE}
	}
	// The metrics port is PERMISSIVE with spec.monitoring: a Prometheus
	// scrapes from outside the mesh as a rule (it has no sidecar
	// certificate), HTTP is client-first so its plaintext is detected and
	// served, and the series it reads are what the PodMonitor exists for.
	// The NetworkPolicy still decides who reaches the port.
	if c.Spec.MonitoringEnabled() {
		levels[MetricsPort] = &securityapi.PeerAuthentication_MutualTLS{Mode: securityapi.PeerAuthentication_MutualTLS_PERMISSIVE}
	}
	listenerMeshLevels(c, levels)
	topologyMeshLevels(c, levels)
	if len(levels) > 0 {
		pa.Spec.PortLevelMtls = levels
	}
	if stage.RolledBackGeneration != 0 {
		pa.Annotations = map[string]string{AnnotationMeshRolledBack: fmt.Sprint(stage.RolledBackGeneration)}
		if stage.RolledBackFor != "" {
			pa.Annotations[AnnotationMeshRolledBackFor] = stage.RolledBackFor
		}
	}
	return pa
}
