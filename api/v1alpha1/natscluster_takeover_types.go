package v1alpha1

// TakeoverSpec names a running release of the official NATS Helm chart
// (nats-io/k8s, chart nats) whose servers this cluster takes over, one at a
// time, keeping each server's name and JetStream claim and the clients'
// Service (docs/migration.md, "Taking over a running release").
type TakeoverSpec struct {
	// HelmRelease is the release's name. It must be the NatsCluster's name:
	// the servers keep their pod names (JetStream knows its peers by name)
	// and the clients' Services keep theirs.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	HelmRelease string `json:"helmRelease"`
}

// TakeoverPhase is how far a takeover has come.
// +kubebuilder:validation:Enum=ReplacingServers;ClosingRoutes;Complete
type TakeoverPhase string

const (
	// TakeoverReplacingServers: the chart's StatefulSet is gone (its pods
	// kept), its Services, ConfigMap and budget are the cluster's, and the
	// rollout replaces its servers one at a time with routes still open as
	// the chart's are, so old and new servers route to each other.
	TakeoverReplacingServers TakeoverPhase = "ReplacingServers"
	// TakeoverClosingRoutes: every server is kubenats'; the routes close
	// (password, and mutual TLS unless disabled) with the route TLS
	// transition, every server at once.
	TakeoverClosingRoutes TakeoverPhase = "ClosingRoutes"
	// TakeoverComplete: the routes are closed.
	TakeoverComplete TakeoverPhase = "Complete"
)

// TakeoverStatus is what the takeover did so far.
type TakeoverStatus struct {
	// Phase: ReplacingServers, ClosingRoutes, then Complete.
	// +optional
	Phase TakeoverPhase `json:"phase,omitempty"`
}

// TakingOver reports whether the cluster was made from a chart release.
func (s *NatsClusterSpec) TakingOver() bool { return s.Takeover != nil }
