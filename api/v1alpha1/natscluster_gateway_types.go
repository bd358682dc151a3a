package v1alpha1

// GatewaySpec joins this cluster to a supercluster: every NatsCluster of
// it names the others, in this Kubernetes cluster by reference or
// elsewhere by URL, and they connect by gateways (port 7222).
//
// Gateways are always mutual TLS (each cluster presents its certificate
// and verifies the other's against ca.crt) and always authenticate with
// the supercluster's gateway user and password, from a Secret of yours
// that every member holds. nats-server reloads no gateway setting but
// the certificate files: every other change restarts the servers through
// the gated rollout.
type GatewaySpec struct {
	// Name of this cluster in the supercluster; it is also the route
	// cluster's name. Unset: metadata.name. Unique in the supercluster.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_]*$`
	// +optional
	Name string `json:"name,omitempty"`

	// SecretRef names a Secret of yours (labelled kubenats.io/allow:
	// "true") with the keys user and password, the same in every member:
	// gateways present them to each other.
	SecretRef LocalSecretRef `json:"secretRef"`

	// TLS is this cluster's gateway certificate, from a Secret of yours
	// or a cert-manager issuer. ca.crt must verify every member's
	// certificate (one issuer for the supercluster, or a bundle).
	TLS GatewayTLSSpec `json:"tls"`

	// Gateways are the other members.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	Gateways []GatewayRemote `json:"gateways"`

	// From may reach the gateway port when spec.networkPolicy is enabled,
	// besides the members named by clusterRef, which are admitted
	// already. Unset: those members alone.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	From []NetworkPolicyPeer `json:"from,omitempty"`
}

// GatewayTLSSpec is where the gateway certificate comes from.
//
// +kubebuilder:validation:XValidation:rule="has(self.secretName) != has(self.issuerRef)",message="gateway TLS: set exactly one of secretName and issuerRef"
type GatewayTLSSpec struct {
	// SecretName is a Secret of yours with tls.crt, tls.key and ca.crt;
	// the certificate must carry the names other members dial.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// IssuerRef has cert-manager issue the certificate for the headless
	// Service's names, which members in this Kubernetes cluster dial.
	// +optional
	IssuerRef *IssuerRef `json:"issuerRef,omitempty"`
}

// GatewayRemote is one other member of the supercluster.
//
// +kubebuilder:validation:XValidation:rule="has(self.urls) != has(self.clusterRef)",message="a gateway needs exactly one of urls and clusterRef"
type GatewayRemote struct {
	// Name is that member's gateway name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_]*$`
	Name string `json:"name"`

	// URLs of its gateway listeners, for members outside this Kubernetes
	// cluster. No credentials in them.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^(nats|tls)://[^\s@/]+$`
	// +listType=atomic
	// +optional
	URLs []string `json:"urls,omitempty"`

	// ClusterRef is a NatsCluster in this Kubernetes cluster; its servers
	// are dialed through its headless Service.
	// +optional
	ClusterRef *GatewayClusterRef `json:"clusterRef,omitempty"`
}

// GatewayClusterRef names a NatsCluster, in any namespace.
type GatewayClusterRef struct {
	// Name of the NatsCluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Namespace of the NatsCluster. Unset: this cluster's.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Replicas is how many servers it runs, for one URL per server (the
	// headless Service's per-pod names, which its certificate carries).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// GatewayEnabled reports whether the cluster joins a supercluster.
func (s *NatsClusterSpec) GatewayEnabled() bool { return s.Gateway != nil }
