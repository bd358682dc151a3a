package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NatsUserSpec is a user of a NatsAccount: its permissions, and a creds
// file in a Secret of this namespace. In nsc terms it is `nsc add user`
// signed with the account's signing key (docs/accounts.md).
//
// +kubebuilder:validation:XValidation:rule="self.account == oldSelf.account",message="account is immutable: delete the user and make one in the other account"
type NatsUserSpec struct {
	// Account is the NatsAccount, in this namespace, the user belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Account string `json:"account"`

	// Permissions of the user. Unset: every subject of its account.
	// +optional
	Permissions *UserPermissions `json:"permissions,omitempty"`

	// ConnectionTypes the user may connect with. Unset: all.
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +optional
	ConnectionTypes []ConnectionType `json:"connectionTypes,omitempty"`

	// ExpiresAt is when the servers stop accepting the user's credentials.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// SecretName is the Secret that gets the creds file, the URL and the CA.
	// Unset: <name>-nats-creds.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	SecretName string `json:"secretName,omitempty"`
}

// UserPermissions are what a user may publish and subscribe to.
type UserPermissions struct {
	// +optional
	Publish *SubjectPermission `json:"publish,omitempty"`
	// +optional
	Subscribe *SubjectPermission `json:"subscribe,omitempty"`
	// AllowResponses lets the user publish replies to the requests it
	// receives, whatever Publish allows.
	// +optional
	AllowResponses *ResponsePermission `json:"allowResponses,omitempty"`
}

// ResponsePermission bounds the replies a user may send to one request.
type ResponsePermission struct {
	// MaxMsgs is how many replies per request; -1 is unlimited.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=1000000
	// +kubebuilder:default=1
	// +optional
	MaxMsgs int `json:"maxMsgs,omitempty"`
	// Expires is how long after the request a reply may be sent.
	// +optional
	Expires Duration `json:"expires,omitempty"`
}

// ConnectionType is how a user's client connects.
// +kubebuilder:validation:Enum=STANDARD;WEBSOCKET;LEAFNODE;LEAFNODE_WS;MQTT;MQTT_WS;IN_PROCESS
type ConnectionType string

// NatsUserStatus is the observed state of a NatsUser.
type NatsUserStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions, Ready first.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// PublicKey is the user's NATS identity (a U... key, public).
	// +optional
	PublicKey string `json:"publicKey,omitempty"`
	// ExpiresAt is when the issued credentials expire.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// CredentialsSecretRef names the Secret with the creds file.
	// +optional
	CredentialsSecretRef *LocalRef `json:"credentialsSecretRef,omitempty"`
}

// NatsUser is a user of a NatsAccount, with its credentials in a Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=nuser,categories=nats
// +kubebuilder:printcolumn:name="Account",type=string,JSONPath=`.spec.account`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Expires",type=date,JSONPath=`.status.expiresAt`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.credentialsSecretRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NatsUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NatsUserSpec `json:"spec"`
	// Status is the operator's. Until its first pass it reads
	// observedGeneration 0 (a default), so that GitOps tools (kstatus)
	// read a resource just made as in progress, not as current.
	// +kubebuilder:default={observedGeneration:0}
	Status NatsUserStatus `json:"status,omitempty"`
}

// NatsUserList is a list of NatsUsers.
//
// +kubebuilder:object:root=true
type NatsUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NatsUser `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NatsUser{}, &NatsUserList{})
}

// CredentialsSecretName is the Secret that gets u's creds file.
func (u *NatsUser) CredentialsSecretName() string {
	if u.Spec.SecretName != "" {
		return u.Spec.SecretName
	}
	return u.Name + "-nats-creds"
}

// DeletionGuardFinalizer holds a deleted NatsCluster while its streams
// hold messages or other namespaces' resources use it, until they are gone
// or the annotation kubenats.io/delete-with-data is "true".
const DeletionGuardFinalizer = "kubenats.io/deletion-guard"

// ConditionDeleting is a deleted NatsCluster's guard: what it waits for.
const ConditionDeleting = "Deleting"

// Finalizers of NatsAccount and NatsUser: the operator revokes what it
// issued before the object goes (the account's users on the servers, the
// user in its account's JWT).
const (
	AccountFinalizer = "kubenats.io/account"
	UserFinalizer    = "kubenats.io/user"
)

// AnnotationRotateSigningKey on a NatsAccount asks for a new signing key:
// each new value is one rotation. Every user is re-issued with the new
// key; the previous one stays in the account until every user holds the
// new creds and a grace is over, so connected clients stay connected.
const AnnotationRotateSigningKey = "kubenats.io/rotate-signing-key"

// ConditionSigningKeyRotated reports a NatsAccount's last rotation.
const ConditionSigningKeyRotated = "SigningKeyRotated"

// AnnotationRotateOperatorSigningKey on a NatsCluster in mode jwt asks for
// a new signing key of its NATS operator, the key that signs the accounts:
// each new value is one rotation. The servers restart into trusting the
// new key beside the old, every account is signed with it, then the
// servers restart into trusting it alone; users keep their creds.
const AnnotationRotateOperatorSigningKey = "kubenats.io/rotate-operator-signing-key"

// ConditionOperatorSigningKeyRotated reports a NatsCluster's last rotation
// of its operator signing key: which step is under way, or done.
const ConditionOperatorSigningKeyRotated = "OperatorSigningKeyRotated"

// The keys of a NatsUser's credentials Secret.
const (
	CredsKey    = "user.creds"
	CredsURLKey = "url"
	CredsCAKey  = "ca.crt"
)
