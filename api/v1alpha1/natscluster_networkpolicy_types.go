package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Where the operator runs unless spec.networkPolicy.operator says otherwise:
// the namespace and pod labels of config/manager's Deployment, which
// dist/install.yaml installs. The CRD's default markers say the same; an
// envtest case checks that they agree.
const (
	DefaultOperatorNamespace = "kubenats-system"
	DefaultOperatorPodLabel  = "app.kubernetes.io/name"
	DefaultOperatorPodValue  = "kubenats"
)

// NetworkPolicySpec asks for a NetworkPolicy that admits to each server port
// only who needs it:
//
//   - routes (6222): the cluster's own server pods, nothing else;
//   - clients (4222): the operator and the peers listed in clients;
//   - monitoring (8222): the operator and the peers listed in monitoring.
//
// Every other port of the servers (a websocket or leafnode listener added
// through spec.config) is closed by it; add a NetworkPolicy of your own to
// open one, policies add up. Traffic from the node itself (kubelet probes)
// is not restricted by NetworkPolicies. Anyone who may create pods in the
// cluster's namespace can give a pod the server labels, so the policy is a
// second wall, not a replacement for route authentication and TLS.
type NetworkPolicySpec struct {
	// Enabled renders the NetworkPolicy <name>. Off unless asked: a policy
	// closes the client port to everyone not listed. Turning it off again
	// removes the policy.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Clients may reach the client port 4222, besides the operator. Unset:
	// only the operator. A peer follows NetworkPolicy's rules: a
	// podSelector alone selects pods in the cluster's own namespace.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Clients []NetworkPolicyPeer `json:"clients,omitempty"`

	// Monitoring may reach the monitor port 8222 (/varz, /healthz, metrics
	// scrapers), besides the operator. Unset: only the operator.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Monitoring []NetworkPolicyPeer `json:"monitoring,omitempty"`

	// Operator is where the kubenats operator's pods run; they reach the
	// client port (system account, JetStream resources) and the monitor
	// port (version, health). The defaults match dist/install.yaml.
	// +kubebuilder:default={}
	// +optional
	Operator OperatorPeer `json:"operator,omitempty"`
}

// NetworkPolicyPeer is who may connect: pods chosen by namespaceSelector,
// podSelector or both (as in a NetworkPolicy), or addresses in ipBlock.
//
// +kubebuilder:validation:XValidation:rule="has(self.namespaceSelector) || has(self.podSelector) || has(self.ipBlock)",message="a peer needs namespaceSelector, podSelector or ipBlock"
// +kubebuilder:validation:XValidation:rule="!has(self.ipBlock) || !(has(self.namespaceSelector) || has(self.podSelector))",message="ipBlock stands alone: it cannot be combined with namespaceSelector or podSelector"
type NetworkPolicyPeer struct {
	// NamespaceSelector selects namespaces by their labels; every namespace
	// carries kubernetes.io/metadata.name: <its name>. {} selects all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// PodSelector selects pods: in the namespaces namespaceSelector
	// selects, or alone in the cluster's own namespace.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`

	// IPBlock admits addresses, for clients outside the cluster (the source
	// address a LoadBalancer keeps with externalTrafficPolicy Local).
	// +optional
	IPBlock *IPBlock `json:"ipBlock,omitempty"`
}

// IPBlock is a CIDR, less the CIDRs in except.
//
// +kubebuilder:validation:XValidation:rule="!has(self.except) || self.except.all(e, cidr(self.cidr).containsCIDR(e) && cidr(e).prefixLength() > cidr(self.cidr).prefixLength())",message="ipBlock.except must be CIDRs strictly inside ipBlock.cidr"
type IPBlock struct {
	// CIDR such as 203.0.113.0/24 or 2001:db8::/64.
	CIDR CIDR `json:"cidr"`

	// Except are CIDRs inside cidr that are not admitted.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Except []CIDR `json:"except,omitempty"`
}

// CIDR is an IPv4 or IPv6 CIDR. 43 characters hold the longest IPv6 one.
//
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR such as 203.0.113.0/24"
type CIDR string

// OperatorPeer finds the operator's pods: the pods labelled podLabels in
// namespace. It is a field, not an operator flag, so that `kubenats render`
// prints the very policy the operator applies.
type OperatorPeer struct {
	// Namespace the operator runs in.
	// +kubebuilder:default=kubenats-system
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// PodLabels are labels every operator pod carries.
	// +kubebuilder:default={"app.kubernetes.io/name":"kubenats"}
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`
}

// NetworkPolicyEnabled reports whether c asks for its NetworkPolicy.
func (s *NatsClusterSpec) NetworkPolicyEnabled() bool {
	return s.NetworkPolicy != nil && s.NetworkPolicy.Enabled
}

// NamespaceOrDefault is the operator's namespace, defaulted as the API
// server defaults it.
func (o *OperatorPeer) NamespaceOrDefault() string {
	if o.Namespace == "" {
		return DefaultOperatorNamespace
	}
	return o.Namespace
}

// PodLabelsOrDefault are the operator pods' labels, defaulted as the API
// server defaults them. The result is a copy.
func (o *OperatorPeer) PodLabelsOrDefault() map[string]string {
	if len(o.PodLabels) == 0 {
		return map[string]string{DefaultOperatorPodLabel: DefaultOperatorPodValue}
	}
	out := make(map[string]string, len(o.PodLabels))
	for k, v := range o.PodLabels {
		out[k] = v
	}
	return out
}
