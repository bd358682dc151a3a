package v1alpha1

// MeshSpec puts the servers into a service mesh.
type MeshSpec struct {
	// Istio runs the servers in the Istio mesh, with a sidecar in every
	// server pod and a PeerAuthentication <name> that selects exactly this
	// cluster's pods. Its presence is the switch: an object rather than a
	// boolean, so that its settings (mtls) sit under it and cannot be given
	// without it. The operator moves the cluster into the mesh in stages
	// (PERMISSIVE, sidecars rolled in one server at a time, then the target
	// mode once every sidecar is ready, every route up and JetStream
	// settled), and out again the same way when it is removed. Istio's CRDs
	// must be installed; without them the cluster reports MeshReady=False,
	// reason IstioNotInstalled, and runs as before.
	// +optional
	Istio *IstioMeshSpec `json:"istio,omitempty"`
}

// MeshMTLSMode is the mutual TLS mode the servers end in.
// +kubebuilder:validation:Enum=Strict;Permissive
type MeshMTLSMode string

const (
	// MeshMTLSStrict: only workloads in the mesh reach the servers, the
	// monitor port included unless monitorPermissive says otherwise.
	MeshMTLSStrict MeshMTLSMode = "Strict"
	// MeshMTLSPermissive: mTLS between sidecars, plaintext still accepted.
	// A plaintext NATS client of a PERMISSIVE port hangs (NATS speaks
	// first, the sidecar waits for the client's first bytes): clients
	// outside the mesh need STRICT's refusal or a TLS-first listener to
	// fail fast.
	MeshMTLSPermissive MeshMTLSMode = "Permissive"
)

// IstioMeshSpec sets how the servers run in the Istio mesh.
type IstioMeshSpec struct {
	// MTLS is the PeerAuthentication mode the operator ends in: Strict
	// (the default) or Permissive.
	// +kubebuilder:default=Strict
	// +optional
	MTLS MeshMTLSMode `json:"mtls,omitempty"`
	// MonitorPermissive keeps the monitor port (8222) PERMISSIVE whatever
	// the mode, so that a scraper outside the mesh reaches /varz and the
	// rest in plaintext. Off by default: the exception loosens the
	// platform's own policy (a STRICT namespace or mesh) for this port, and
	// the monitor endpoints tell anyone who reaches them the cluster's
	// connections, accounts and streams. Scrape from inside the mesh
	// instead, or turn this on knowing who else then reaches the port.
	// +optional
	MonitorPermissive bool `json:"monitorPermissive,omitempty"`
	// Rollback is what the operator does when STRICT meets a fault of the
	// mesh (a server without its sidecar, or a sidecar not ready, or a
	// route missing between ready servers, for a minute, outside a
	// rollout); a server's own trouble (not ready while its sidecar is,
	// JetStream unsettled) is reported and never loosens mTLS. Report (the
	// default): it stays STRICT and says so, with MeshReady=False reason
	// StrictUnhealthy and a Warning event; the platform's policy is never
	// loosened by the operator on its own. Automatic: it goes back to
	// PERMISSIVE, reason RolledBack; after a sidecar fault it tries STRICT
	// again once every server has a ready sidecar, after a route fault
	// (which only STRICT shows) after the next change of the spec.
	// +kubebuilder:default=Report
	// +optional
	Rollback MeshRollbackPolicy `json:"rollback,omitempty"`
}

// MeshRollbackPolicy says whether the operator may loosen STRICT by itself.
// +kubebuilder:validation:Enum=Report;Automatic
type MeshRollbackPolicy string

const (
	// MeshRollbackReport: trouble under STRICT is reported, never acted on.
	MeshRollbackReport MeshRollbackPolicy = "Report"
	// MeshRollbackAutomatic: trouble under STRICT sends the policy back to
	// PERMISSIVE.
	MeshRollbackAutomatic MeshRollbackPolicy = "Automatic"
)

// IstioMesh is spec.mesh.istio, nil when the cluster is not in the mesh.
func (s *NatsClusterSpec) IstioMesh() *IstioMeshSpec {
	if s.Mesh == nil {
		return nil
	}
	return s.Mesh.Istio
}

// MTLSMode is mtls, defaulted.
func (m *IstioMeshSpec) MTLSMode() MeshMTLSMode {
	if m == nil || m.MTLS == "" {
		return MeshMTLSStrict
	}
	return m.MTLS
}

// AutomaticRollback reports whether the spec lets the operator loosen
// STRICT by itself (rollback: Automatic); unset means Report.
func (m *IstioMeshSpec) AutomaticRollback() bool {
	return m != nil && m.Rollback == MeshRollbackAutomatic
}
