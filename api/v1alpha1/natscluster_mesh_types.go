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
	// MeshMTLSStrict: only workloads in the mesh reach the servers (the
	// monitor port stays PERMISSIVE, for scrapers outside the mesh).
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
}

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
