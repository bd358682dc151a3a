package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// StreamSpec is a JetStream stream. Field names follow NACK's where the
// meaning is the same, so moving from NACK is a change of apiVersion and
// connection fields.
//
// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name",message="name is immutable: a renamed stream is a new stream"
// +kubebuilder:validation:XValidation:rule="self.storage == oldSelf.storage",message="storage cannot change on the server"
// +kubebuilder:validation:XValidation:rule="self.retention == oldSelf.retention || (self.retention != 'workqueue' && oldSelf.retention != 'workqueue')",message="retention cannot change to or from workqueue"
// +kubebuilder:validation:XValidation:rule="!has(self.mirror) || (has(oldSelf.mirror) && self.mirror.name == oldSelf.mirror.name)",message="mirror cannot be added or pointed elsewhere (removing it promotes the mirror to a stream of its own, once)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.sealed) || !oldSelf.sealed || (has(self.sealed) && self.sealed)",message="a sealed stream cannot be unsealed"
// +kubebuilder:validation:XValidation:rule="!has(self.mirror) || (!has(self.subjects) && !has(self.sources))",message="a mirror has no subjects and no sources"
// +kubebuilder:validation:XValidation:rule="!has(self.firstSequence) || !has(oldSelf.firstSequence) || self.firstSequence == oldSelf.firstSequence",message="firstSequence is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.denyDelete) || !oldSelf.denyDelete || (has(self.denyDelete) && self.denyDelete)",message="denyDelete cannot be turned off on the server"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.denyPurge) || !oldSelf.denyPurge || (has(self.denyPurge) && self.denyPurge)",message="denyPurge cannot be turned off on the server"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.allowMsgTtl) || !oldSelf.allowMsgTtl || (has(self.allowMsgTtl) && self.allowMsgTtl)",message="allowMsgTtl cannot be turned off on the server"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.allowMsgSchedules) || !oldSelf.allowMsgSchedules || (has(self.allowMsgSchedules) && self.allowMsgSchedules)",message="allowMsgSchedules cannot be turned off on the server"
// +kubebuilder:validation:XValidation:rule="has(self.allowMsgCounter) == has(oldSelf.allowMsgCounter) && (!has(self.allowMsgCounter) || self.allowMsgCounter == oldSelf.allowMsgCounter)",message="allowMsgCounter cannot change on the server"
// +kubebuilder:validation:XValidation:rule="(has(self.persistMode) ? self.persistMode : 'default') == (has(oldSelf.persistMode) ? oldSelf.persistMode : 'default')",message="persistMode cannot change on the server"
// +kubebuilder:validation:XValidation:rule="!has(self.discardPerSubject) || !self.discardPerSubject || (self.discard == 'new' && has(self.maxMsgsPerSubject) && self.maxMsgsPerSubject > 0)",message="discardPerSubject needs discard new and maxMsgsPerSubject above 0"
// +kubebuilder:validation:XValidation:rule="has(self.account) == has(oldSelf.account) && (!has(self.account) || self.account == oldSelf.account)",message="account is immutable: the same name in another account is another object"
// +kubebuilder:validation:XValidation:rule="!has(self.account) || has(self.cluster)",message="account applies to a NatsCluster target (cluster), not to a connection"
// +kubebuilder:validation:XValidation:rule="!has(self.restore) || (has(self.cluster) && (has(self.restore.user) || (!has(self.cluster.namespace) && !has(self.account))))",message="restore needs a NatsCluster (cluster), and, for an account or a cluster of another namespace, the NatsUser of this namespace it restores as (restore.user): the restore Job runs here and mounts only what this namespace holds"
type StreamSpec struct {
	Target    `json:",inline"`
	Lifecycle `json:",inline"`

	// Name of the stream on the server.
	// +kubebuilder:validation:Pattern=`^[^.*>\s/\\]+$`
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`
	// +optional
	Description string `json:"description,omitempty"`
	// +listType=atomic
	// +optional
	Subjects []string `json:"subjects,omitempty"`
	// +kubebuilder:validation:Enum=limits;interest;workqueue
	// +kubebuilder:default=limits
	// +optional
	Retention string `json:"retention,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxConsumers int `json:"maxConsumers,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxMsgs int64 `json:"maxMsgs,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// +kubebuilder:validation:Enum=old;new
	// +kubebuilder:default=old
	// +optional
	Discard string `json:"discard,omitempty"`
	// +optional
	DiscardPerSubject bool `json:"discardPerSubject,omitempty"`
	// +optional
	MaxAge Duration `json:"maxAge,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxMsgsPerSubject int64 `json:"maxMsgsPerSubject,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxMsgSize int32 `json:"maxMsgSize,omitempty"`
	// Storage is file (the default, it survives restarts) or memory.
	// +kubebuilder:default=file
	// +optional
	Storage StorageType `json:"storage,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=1
	// +optional
	Replicas int `json:"replicas,omitempty"`
	// +optional
	NoAck bool `json:"noAck,omitempty"`
	// DuplicateWindow bounds message-ID deduplication. Unset: 2m, or maxAge
	// when that is shorter (the server's own rule; a fixed default would
	// be refused next to a short maxAge).
	// +optional
	DuplicateWindow Duration `json:"duplicateWindow,omitempty"`
	// +optional
	Placement *Placement `json:"placement,omitempty"`
	// Mirror makes the stream a read-only copy of another stream (a
	// standby). Removing it promotes the mirror to a stream of its own
	// (nats-server 2.12+): it keeps its messages and stops following; a
	// mirror cannot be added back, or pointed at another stream.
	// +optional
	Mirror *StreamSource `json:"mirror,omitempty"`
	// +listType=atomic
	// +optional
	Sources []StreamSource `json:"sources,omitempty"`
	// Restore makes the stream from a backup when the server does not
	// have it: once, by a Job of the operator's image, before the
	// operator writes anything else. The stream keeps its sequence
	// numbers and its consumers their ack floors. A stream the server has
	// already is never overwritten: the Stream is refused instead.
	// +optional
	Restore *StreamRestore `json:"restore,omitempty"`
	// +optional
	Sealed bool `json:"sealed,omitempty"`
	// +optional
	DenyDelete bool `json:"denyDelete,omitempty"`
	// +optional
	DenyPurge bool `json:"denyPurge,omitempty"`
	// +optional
	AllowRollup bool `json:"allowRollup,omitempty"`
	// +kubebuilder:validation:Enum=none;s2
	// +kubebuilder:default=none
	// +optional
	Compression string `json:"compression,omitempty"`
	// +optional
	FirstSequence uint64 `json:"firstSequence,omitempty"`
	// +optional
	SubjectTransform *SubjectTransform `json:"subjectTransform,omitempty"`
	// +optional
	Republish *Republish `json:"republish,omitempty"`
	// +optional
	AllowDirect bool `json:"allowDirect,omitempty"`
	// +optional
	MirrorDirect bool `json:"mirrorDirect,omitempty"`
	// +optional
	ConsumerLimits *ConsumerLimits `json:"consumerLimits,omitempty"`
	// Metadata on the server object. Keys starting with io.kubenats. are
	// the operator's.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
	// AllowMsgTTL lets publishers set a per-message TTL.
	// +optional
	AllowMsgTTL bool `json:"allowMsgTtl,omitempty"`
	// +optional
	SubjectDeleteMarkerTTL Duration `json:"subjectDeleteMarkerTtl,omitempty"`
	// +optional
	AllowMsgCounter bool `json:"allowMsgCounter,omitempty"`
	// +optional
	AllowAtomicPublish bool `json:"allowAtomicPublish,omitempty"`
	// +optional
	AllowMsgSchedules bool `json:"allowMsgSchedules,omitempty"`
	// +optional
	AllowBatchPublish bool `json:"allowBatchPublish,omitempty"`
	// PersistMode is default or async.
	// +kubebuilder:validation:Enum=default;async
	// +optional
	PersistMode string `json:"persistMode,omitempty"`
}

// ConsumerLimits are defaults and caps for the stream's consumers.
type ConsumerLimits struct {
	// +optional
	InactiveThreshold Duration `json:"inactiveThreshold,omitempty"`
	// +optional
	MaxAckPending int `json:"maxAckPending,omitempty"`
}

// StreamRestore names a backup: a Backup of this namespace, or a place
// holding one (a backup natscli wrote, or one kept from a namespace that
// is gone): a directory on a claim of this namespace, or a key in an
// object store.
//
// +kubebuilder:validation:XValidation:rule="[has(self.backup), has(self.volumeClaim), has(self.s3)].filter(x, x).size() == 1",message="name a Backup, a volumeClaim and a path, or s3 and a path"
// +kubebuilder:validation:XValidation:rule="has(self.backup) != has(self.path)",message="path goes with volumeClaim or s3"
type StreamRestore struct {
	// Backup is a Succeeded Backup of this namespace holding this stream.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	Backup string `json:"backup,omitempty"`
	// VolumeClaim holds the backup at Path.
	// +optional
	VolumeClaim *BackupVolumeClaim `json:"volumeClaim,omitempty"`
	// S3 holds the backup under the key Path (a Backup's is
	// <prefix>/<its name>).
	// +optional
	S3 *S3Bucket `json:"s3,omitempty"`
	// User is a NatsUser of this namespace, of the Stream's account,
	// whose credentials the restore Job connects with (auth mode jwt).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	User string `json:"user,omitempty"`
	// MaxMiBPerSecond bounds how fast the restore sends the backup to
	// the servers, in MiB of the archive per second: a large restore into
	// a cluster that serves clients leaves them its disks and the
	// network. Unset: as fast as the servers take it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MaxMiBPerSecond int32 `json:"maxMiBPerSecond,omitempty"`
	// Path is the backup's directory on the claim, or its key in the
	// bucket: relative, and no part of it starts with a dot.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`
	// +optional
	Path string `json:"path,omitempty"`
}

// Stream is a JetStream stream kept equal to its spec on the server.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=nats
// +kubebuilder:printcolumn:name="Stream",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Stream struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec StreamSpec `json:"spec"`
	// Status is the operator's. Until its first pass it reads
	// observedGeneration 0 (a default), so that GitOps tools (kstatus)
	// read a resource just made as in progress, not as current.
	// +kubebuilder:default={observedGeneration:0}
	Status JetStreamStatus `json:"status,omitempty"`
}

// StreamList is a list of Streams.
//
// +kubebuilder:object:root=true
type StreamList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Stream `json:"items"`
}

func init() { SchemeBuilder.Register(&Stream{}, &StreamList{}) }
