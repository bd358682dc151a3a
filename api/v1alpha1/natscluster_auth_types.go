package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AuthMode is how clients authenticate.
// +kubebuilder:validation:Enum=users;token;none;jwt
type AuthMode string

const (
	// AuthUsers gives clients a user and password in an application account
	// with JetStream, and the operator a system account user of its own.
	AuthUsers AuthMode = "users"
	// AuthToken gives clients a single token. nats-server refuses a token
	// together with accounts, so there is no system user in this mode.
	AuthToken AuthMode = "token"
	// AuthNone lets anyone connect. Only when asked for explicitly.
	AuthNone AuthMode = "none"
	// AuthJWT is NATS's decentralized authentication: the operator keeps the
	// NATS operator's keys, every NatsAccount is an account JWT the servers'
	// full resolver stores, and every NatsUser a creds file
	// (docs/accounts.md).
	AuthJWT AuthMode = "jwt"
)

// AuthSpec selects how clients authenticate.
//
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || !has(self.mode) || self.mode != 'none'",message="secretRef makes no sense with mode none"
// +kubebuilder:validation:XValidation:rule="!has(self.user) || !has(self.mode) || self.mode == 'users'",message="user applies to mode users only"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || !has(self.mode) || self.mode != 'jwt'",message="secretRef makes no sense with mode jwt: NatsUsers carry the credentials"
// +kubebuilder:validation:XValidation:rule="!has(self.accounts) || (has(self.mode) && self.mode == 'jwt')",message="accounts applies to mode jwt only"
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'jwt') == (has(oldSelf.mode) && oldSelf.mode == 'jwt')",message="auth.mode cannot change to or from jwt on an existing cluster: create a new NatsCluster in the other mode, mirror or source its streams from the old one, move the clients to the new credentials, then delete the old cluster (docs/accounts.md, Migrating)"
type AuthSpec struct {
	// Mode is users (the default), token, none or jwt. A change to or from
	// jwt is refused: the servers' identities and every client's
	// credentials change with it (docs/accounts.md, Migrating).
	// +kubebuilder:default=users
	// +optional
	Mode AuthMode `json:"mode,omitempty"`

	// User is the application user's name in mode users.
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`
	// +optional
	User string `json:"user,omitempty"`

	// SecretRef names a Secret of the user's holding the password (mode
	// users) or token (mode token). Unset: the operator generates one once in
	// <name>-auth and never rotates it silently.
	// +optional
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`

	// Accounts says which namespaces may attach NatsAccounts to this
	// cluster (mode jwt). Unset: only the cluster's own namespace.
	// +optional
	Accounts *AccountsFrom `json:"accounts,omitempty"`
}

// AccountsFrom names the namespaces whose NatsAccounts a cluster in mode
// jwt admits: those listed, and those the selector matches. The cluster's
// own namespace is always admitted.
type AccountsFrom struct {
	// Namespaces are admitted by name.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector admits the namespaces whose labels it matches.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// DefaultLimits are the limits of every account on the cluster (its
	// own namespace's too) that leaves a limit unset, field by field, as a
	// NatsAccount's spec.limits names them. defaultLimits.jetstream
	// applies to an account that turns JetStream on (limits.jetstream)
	// and turns it on for none. A default above maxLimits is the maximum.
	// Unset: an account that sets nothing is unlimited, up to maxLimits.
	// +optional
	DefaultLimits *AccountLimits `json:"defaultLimits,omitempty"`

	// MaxLimits are the most any account on the cluster (its own
	// namespace's too) gets, field by field. A limit an account sets
	// above it, or leaves unlimited (-1, or unset with no default), is
	// signed at the maximum; the account's condition LimitsWithinMaximum
	// says which, and a Warning event too (docs/accounts.md, Limits).
	// An unset or -1 field has no maximum.
	// +optional
	MaxLimits *AccountLimits `json:"maxLimits,omitempty"`
}

// SecretKeyRef names one key of a Secret in the same namespace.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// Key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:default=password
	// +optional
	Key string `json:"key,omitempty"`
}
