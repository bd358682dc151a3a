package v1alpha1

// LeafnodesSpec connects this cluster to other NATS systems as leafnodes:
// it accepts leafnodes (edge servers joining this cluster as their hub),
// dials remotes (this cluster joining a hub as a leafnode), or both.
//
// What reloads and what restarts follows nats-server's reload rules
// (server/reload.go, getLeafNodeOptionsChanges): remotes (added, removed,
// their URLs, credentials, accounts, deny lists and TLS) change by reload;
// the accepting side (its port, its authorization) only by a restart,
// which the gated rollout carries out. Setting spec.leafnodes the first
// time restarts the servers once (the remotes' files are mounted).
//
// +kubebuilder:validation:XValidation:rule="has(self.accept) || (has(self.remotes) && size(self.remotes) > 0)",message="leafnodes: set accept, remotes or both"
type LeafnodesSpec struct {
	// Accept opens the leafnode port (7422) to leafnodes that authenticate.
	// +optional
	Accept *LeafnodeAcceptSpec `json:"accept,omitempty"`

	// Remotes are hubs this cluster dials as a leafnode.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Remotes []LeafnodeRemote `json:"remotes,omitempty"`
}

// LeafnodeAcceptSpec is the leafnode listener. Authentication is always
// on: in mode users every leafnode presents the leafnode user and its
// password and lands in one account of this cluster; in mode jwt a
// leafnode presents a user's creds, as a client does, and lands in that
// user's account. Modes token and none accept no leafnodes.
type LeafnodeAcceptSpec struct {
	// User is the name leafnodes authenticate with (mode users).
	// +kubebuilder:default=leaf
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`
	// +optional
	User string `json:"user,omitempty"`

	// SecretRef names a Secret of yours (labelled kubenats.io/allow:
	// "true") holding the leafnodes' password (mode users). Unset: the
	// operator generates one once in <name>-leafnodes-auth. A change of
	// it restarts the servers: nats-server cannot reload leafnode
	// authorization.
	// +optional
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`

	// Account is the account of this cluster that accepted leafnodes
	// join (mode users). Unset: the application account.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Z0-9_]{0,31}$`
	// +optional
	Account string `json:"account,omitempty"`

	// TLS secures the leafnode listener, from a Secret of yours or a
	// cert-manager issuer exactly as for clients (renewals by reload).
	// Unset: plaintext, with authentication.
	// +kubebuilder:validation:XValidation:rule="has(self.secretName) != has(self.issuerRef)",message="leafnodes.accept.tls: set exactly one of secretName and issuerRef"
	// +kubebuilder:validation:XValidation:rule="!has(self.allowPlaintext)",message="leafnodes.accept.tls: allowPlaintext applies to the client port only"
	// +optional
	TLS *ClientTLSSpec `json:"tls,omitempty"`

	// From may reach the leafnode port when spec.networkPolicy is
	// enabled. Unset: nobody but the operator.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	From []NetworkPolicyPeer `json:"from,omitempty"`
}

// LeafnodeRemote is one hub this cluster dials.
//
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || self.urls.all(u, !u.startsWith('ws://'))",message="a remote with tls cannot use ws:// URLs: use wss://"
// +kubebuilder:validation:XValidation:rule="!(has(self.credsSecretRef) && has(self.userSecretRef))",message="a remote takes credsSecretRef or userSecretRef, not both"
type LeafnodeRemote struct {
	// Name identifies the remote in this spec (its files, its status).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// URLs of the hub's leafnode listeners. No credentials in them: those
	// come from credsSecretRef or userSecretRef.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^(nats-leaf|nats|tls|ws|wss)://[^\s@/]+(/[^\s@]*)?$`
	// +listType=atomic
	URLs []string `json:"urls"`

	// CredsSecretRef names a Secret of yours (labelled kubenats.io/allow:
	// "true") whose key `creds` is the .creds file (user JWT and seed)
	// this cluster presents to the hub.
	// +optional
	CredsSecretRef *LocalSecretRef `json:"credsSecretRef,omitempty"`

	// UserSecretRef names a Secret of yours (labelled kubenats.io/allow:
	// "true") with the keys `user` and `password` this cluster presents
	// to the hub (the operator hands them to the servers in a file of its
	// own, which they reread on reload, never in the ConfigMap).
	// +optional
	UserSecretRef *LocalSecretRef `json:"userSecretRef,omitempty"`

	// Account is the local account the remote binds to: what the hub
	// sees of this cluster, and what this cluster's clients see of the
	// hub. Unset: the application account (mode users); in mode jwt the
	// account's public key.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Z0-9_]{0,55}$`
	// +optional
	Account string `json:"account,omitempty"`

	// TLS dials the hub over TLS, verifying it against ca.crt of a Secret
	// of yours (labelled kubenats.io/allow: "true"). This cluster presents
	// no certificate of its own to the hub: it authenticates with its
	// credentials.
	// +optional
	TLS *LocalSecretRef `json:"tls,omitempty"`

	// DenyImports are subjects this cluster never receives from the hub.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^[^\s]+$`
	// +listType=atomic
	// +optional
	DenyImports []string `json:"denyImports,omitempty"`

	// DenyExports are subjects this cluster never sends to the hub.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^[^\s]+$`
	// +listType=atomic
	// +optional
	DenyExports []string `json:"denyExports,omitempty"`
}

// LocalSecretRef names a Secret in the cluster's namespace.
type LocalSecretRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// LeafnodesAccepted reports whether the servers open the leafnode port.
func (s *NatsClusterSpec) LeafnodesAccepted() bool {
	return s.Leafnodes != nil && s.Leafnodes.Accept != nil
}

// LeafnodeRemotes are the hubs the servers dial.
func (s *NatsClusterSpec) LeafnodeRemotes() []LeafnodeRemote {
	if s.Leafnodes == nil {
		return nil
	}
	return s.Leafnodes.Remotes
}
