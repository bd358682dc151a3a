package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NatsAccountSpec is a NATS account on a NatsCluster in mode jwt: a subject
// space of its own, with limits, and explicit exports and imports. In nsc
// terms it is `nsc add account` plus `nsc edit account` (docs/accounts.md).
//
// +kubebuilder:validation:XValidation:rule="self.cluster == oldSelf.cluster",message="cluster is immutable: an account lives on one cluster"
type NatsAccountSpec struct {
	// Cluster is the NatsCluster (mode jwt) the account lives on. One in
	// another namespace must admit this namespace in spec.auth.accounts.
	Cluster ClusterRef `json:"cluster"`

	// Limits of the account. Unset fields are unlimited, except JetStream,
	// which is off unless limits.jetstream is set.
	// +kubebuilder:default={}
	// +optional
	Limits AccountLimits `json:"limits,omitempty"`

	// Exports are the streams and services other accounts may import.
	// +kubebuilder:validation:MaxItems=128
	// +listType=atomic
	// +optional
	Exports []AccountExport `json:"exports,omitempty"`

	// Imports are streams and services of other accounts. An import works
	// only once the exporting account exports the subject to this account.
	// +kubebuilder:validation:MaxItems=128
	// +listType=atomic
	// +optional
	Imports []AccountImport `json:"imports,omitempty"`
}

// AccountLimits bound what an account may use on the whole cluster. -1 is
// unlimited, as in NATS.
type AccountLimits struct {
	// Connections is the most client connections at once.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Connections *int64 `json:"connections,omitempty"`
	// Subscriptions is the most subscriptions at once.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	Subscriptions *int64 `json:"subscriptions,omitempty"`
	// Payload is the largest message in bytes (nats-server's own cap is
	// 64MiB).
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=67108864
	// +optional
	Payload *int64 `json:"payload,omitempty"`
	// JetStream turns JetStream on for the account, with these limits.
	// +optional
	JetStream *AccountJetStreamLimits `json:"jetstream,omitempty"`
}

// AccountJetStreamLimits bound an account's JetStream use. Unset is
// unlimited (up to what the servers have).
type AccountJetStreamLimits struct {
	// MemoryStorage is the most memory-stored bytes.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="limits.jetstream.memoryStorage must be positive"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity('16Ti')) <= 0",message="limits.jetstream.memoryStorage must be at most 16Ti"
	// +optional
	MemoryStorage *resource.Quantity `json:"memoryStorage,omitempty"`
	// DiskStorage is the most file-stored bytes, counted once per replica.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="limits.jetstream.diskStorage must be positive"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity('1Pi')) <= 0",message="limits.jetstream.diskStorage must be at most 1Pi"
	// +optional
	DiskStorage *resource.Quantity `json:"diskStorage,omitempty"`
	// Streams is the most streams.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Streams *int64 `json:"streams,omitempty"`
	// Consumers is the most consumers.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Consumers *int64 `json:"consumers,omitempty"`
}

// ExportType is what an export or import carries.
// +kubebuilder:validation:Enum=stream;service
type ExportType string

const (
	// ExportStream carries messages one way: the importer subscribes.
	ExportStream ExportType = "stream"
	// ExportService answers requests: the importer publishes requests.
	ExportService ExportType = "service"
)

// AccountRef names a NatsAccount.
type AccountRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// Namespace of the NatsAccount; unset means this resource's own.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// AccountExport offers a subject to other accounts: to those it names, or
// to every account on the cluster when public.
//
// +kubebuilder:validation:XValidation:rule="(has(self.public) && self.public) != (has(self.to) && size(self.to) > 0)",message="an export names the accounts it is for (to) or is public, not both and not neither"
// +kubebuilder:validation:XValidation:rule="!has(self.responseType) || self.type == 'service'",message="responseType applies to service exports only"
type AccountExport struct {
	// Subject exported.
	Subject Subject `json:"subject"`
	// Type is stream or service.
	Type ExportType `json:"type"`
	// To are the accounts that may import it.
	// +kubebuilder:validation:MaxItems=128
	// +listType=atomic
	// +optional
	To []AccountRef `json:"to,omitempty"`
	// Public lets every account import it.
	// +optional
	Public bool `json:"public,omitempty"`
	// ResponseType of a service: Singleton (default), Stream or Chunked.
	// +kubebuilder:validation:Enum=Singleton;Stream;Chunked
	// +optional
	ResponseType string `json:"responseType,omitempty"`
}

// AccountImport takes a subject another account exports.
type AccountImport struct {
	// Account is the exporting NatsAccount, on the same cluster.
	Account AccountRef `json:"account"`
	// Subject as the exporter exports it.
	Subject Subject `json:"subject"`
	// Type is stream or service, as exported.
	Type ExportType `json:"type"`
	// LocalSubject is where the import appears in this account. Unset: the
	// exported subject.
	// +optional
	LocalSubject Subject `json:"localSubject,omitempty"`
}

// Reasons of a NatsAccount's and a NatsUser's Ready condition.
const (
	// ReasonClusterNotAdmitted: the cluster does not exist, is not in
	// mode jwt, or does not admit the namespace. One reason and one text
	// for all three: a tenant learns nothing of a cluster it may not use.
	ReasonClusterNotAdmitted = "ClusterNotAdmitted"
	// ReasonAccountNotFound: a user's account, or an import's exporter,
	// is not there (or not ready yet).
	ReasonAccountNotFound = "AccountNotFound"
	// ReasonPushFailed: the servers did not take the account JWT yet.
	ReasonPushFailed = "PushFailed"
	// ReasonImportNotExported: the exporter does not export the subject
	// to this account; the servers would refuse the import.
	ReasonImportNotExported = "ImportNotExported"
	// ReasonAccountKeysMissing: the Secret of an account's keys is gone
	// while users hold credentials signed by them. New keys would be a new
	// account (every user locked out, the JetStream data left behind), so
	// none are made without the user's word: delete and re-create the
	// NatsAccount.
	ReasonAccountKeysMissing = "AccountKeysMissing"
	// ReasonAccountKeysMismatch: the Secret where the account's keys are
	// kept records another account (namespace/name or public key) than
	// this one. Nothing is signed, issued or revoked with it; the
	// cluster's administrators remove it (docs/accounts.md, Keys).
	ReasonAccountKeysMismatch = "AccountKeysMismatch"
)

// ConditionLimitsWithinMaximum is, on a NatsAccount of a cluster that
// sets spec.auth.accounts.maxLimits or defaultLimits, whether the
// servers got the limits the account asked for: False (ReasonLimitsClamped)
// names each limit asked above the cluster's maximum, which the JWT
// carries at the maximum instead.
const ConditionLimitsWithinMaximum = "LimitsWithinMaximum"

// Reasons of LimitsWithinMaximum.
const (
	ReasonLimitsWithinMaximum = "WithinMaximum"
	ReasonLimitsClamped       = "LimitsClamped"
)

// AccountJetStreamUsage is what an account holds in JetStream, as the
// servers report it.
type AccountJetStreamUsage struct {
	// +optional
	Memory int64 `json:"memory,omitempty"`
	// +optional
	Storage int64 `json:"storage,omitempty"`
	// +optional
	Streams int64 `json:"streams,omitempty"`
	// +optional
	Consumers int64 `json:"consumers,omitempty"`
}

// NatsAccountStatus is the observed state of a NatsAccount.
type NatsAccountStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions, Ready first.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// PublicKey is the account's NATS identity (an A... key, public).
	// +optional
	PublicKey string `json:"publicKey,omitempty"`
	// Connections are the account's client connections over all servers.
	// +optional
	Connections int64 `json:"connections,omitempty"`
	// Users is the number of NatsUsers issued in the account.
	// +optional
	Users int64 `json:"users,omitempty"`
	// JetStream is the account's JetStream usage.
	// +optional
	JetStream *AccountJetStreamUsage `json:"jetstream,omitempty"`
	// SignedBy is the public key of the NATS operator's signing key that
	// signed the account JWT every ready server last took: a rotation of
	// that key (on the NatsCluster) waits until every account shows the
	// new one.
	// +optional
	SignedBy string `json:"signedBy,omitempty"`
}

// NatsAccount is a NATS account on a NatsCluster in mode jwt.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=nacc,categories=nats
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster.name`
// +kubebuilder:printcolumn:name="Connections",type=integer,JSONPath=`.status.connections`
// +kubebuilder:printcolumn:name="Users",type=integer,JSONPath=`.status.users`
// +kubebuilder:printcolumn:name="Storage",type=integer,JSONPath=`.status.jetstream.storage`
// +kubebuilder:printcolumn:name="Storage limit",type=string,JSONPath=`.spec.limits.jetstream.diskStorage`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NatsAccount struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NatsAccountSpec `json:"spec"`
	// Status is the operator's. Until its first pass it reads
	// observedGeneration 0 (a default), so that GitOps tools (kstatus)
	// read a resource just made as in progress, not as current.
	// +kubebuilder:default={observedGeneration:0}
	Status NatsAccountStatus `json:"status,omitempty"`
}

// NatsAccountList is a list of NatsAccounts.
//
// +kubebuilder:object:root=true
type NatsAccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NatsAccount `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NatsAccount{}, &NatsAccountList{})
}
