package loopback

import "k8s.io/apimachinery/pkg/labels"

// PeerAuthentication policy, as Istio resolves it for one workload and
// port. The model takes policies as plain values rather than from Istio's
// CRDs: the loopback cluster runs without Istio, and the operator's tests
// can translate real PeerAuthentication objects into these (see
// Mesh.SetPeerAuthentications) once the operator renders them.

// MTLSMode is a PeerAuthentication mode.
type MTLSMode string

const (
	ModeUnset      MTLSMode = "UNSET" // inherit from the parent scope
	ModeDisable    MTLSMode = "DISABLE"
	ModePermissive MTLSMode = "PERMISSIVE"
	ModeStrict     MTLSMode = "STRICT"
)

// meshRootNamespace holds the mesh-wide policy (Istio's default root
// namespace).
const meshRootNamespace = "istio-system"

// PeerAuthentication is the part of Istio's object the sidecar obeys.
type PeerAuthentication struct {
	Namespace string
	Name      string
	// Selector is spec.selector.matchLabels; nil or empty: every workload
	// of the namespace (mesh-wide in the root namespace).
	Selector map[string]string
	// Mode is spec.mtls.mode; "" is UNSET.
	Mode MTLSMode
	// PortLevel is spec.portLevelMtls, by container port. Istio obeys it
	// only in a policy with a selector.
	PortLevel map[int32]MTLSMode
}

func (p PeerAuthentication) selective() bool { return len(p.Selector) > 0 }

// effectiveMode is the mode a workload (namespace ns, labels) applies on
// its container port, as Istio documents the precedence: a port-level
// setting of the workload's own selective policy, then that policy's mode,
// then the namespace-wide policy, then the mesh-wide one, then PERMISSIVE.
// UNSET at any level defers to the next. With several matching policies at
// one level Istio takes the oldest; here the first in the list.
func effectiveMode(policies []PeerAuthentication, ns string, podLabels map[string]string, port int32) MTLSMode {
	var workload, namespace, mesh *PeerAuthentication
	for i := range policies {
		p := &policies[i]
		switch {
		case p.Namespace == ns && p.selective():
			if workload == nil && labels.SelectorFromSet(p.Selector).Matches(labels.Set(podLabels)) {
				workload = p
			}
		case p.Namespace == ns && namespace == nil:
			namespace = p
		case p.Namespace == meshRootNamespace && !p.selective() && mesh == nil:
			mesh = p
		}
	}
	var chain []MTLSMode
	if workload != nil {
		chain = append(chain, workload.PortLevel[port], workload.Mode)
	}
	if namespace != nil {
		chain = append(chain, namespace.Mode)
	}
	if mesh != nil {
		chain = append(chain, mesh.Mode)
	}
	for _, m := range chain {
		if m != "" && m != ModeUnset {
			return m
		}
	}
	return ModePermissive
}
