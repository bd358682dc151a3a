package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BackupSpec is one backup of one stream of a NatsCluster, taken once, by a Job of the operator's image, into a volume
// claim or an S3-compatible object store. It is immutable: a backup is a
// fact about the past, and another one is another Backup.
//
// +kubebuilder:validation:XValidation:rule="has(self.volumeClaim) != has(self.s3)",message="a backup goes to a volumeClaim or to s3, one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterNamespace) || has(self.user)",message="a NatsCluster of another namespace is reached as a NatsUser of this namespace (user): the cluster's own credentials stay in its namespace"
type BackupSpec struct {
	// Cluster is the NatsCluster whose stream is backed up: in this
	// namespace, unless ClusterNamespace says another. The Job reaches
	// it with the cluster's own client credentials, which only pods of
	// the cluster's namespace can mount, or as User.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Cluster string `json:"cluster"`

	// ClusterNamespace is Cluster's namespace when it is not this one: a
	// tenant's backup of its account's streams, on a platform's cluster
	// in auth mode jwt that admits this namespace's accounts
	// (spec.auth.accounts). It needs User, and a cluster that does not
	// verify client certificates (whose certificate stays in the
	// cluster's namespace). The cluster's NetworkPolicy must let this
	// namespace's clients in (spec.networkPolicy.clients), as for the
	// tenant's own applications.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ClusterNamespace string `json:"clusterNamespace,omitempty"`

	// User is a NatsUser of this namespace, of an account on Cluster
	// (auth mode jwt), whose credentials the Job connects with: a backup
	// of every stream is then every stream of that user's account. Unset,
	// the Job connects with the cluster's client credentials (modes
	// users, token, none).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	User string `json:"user,omitempty"`

	// Stream is the JetStream stream's name on the servers. Empty, the
	// backup holds every stream the Job's user sees (the cluster's client
	// user's, or User's account's), each in a directory (or under a key)
	// named by the stream, beside kubenats-set.json, their list.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[^.*>\s/\\]+$`
	// +optional
	Stream string `json:"stream,omitempty"`

	// MaxMiBPerSecond bounds how fast the backup reads the stream, in
	// MiB of the archive per second: a large backup then leaves the
	// servers' disks and the network to the clients. The server sends no
	// faster than the Job takes, so the Job's memory stays as it is.
	// Unset: as fast as the server sends.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MaxMiBPerSecond int32 `json:"maxMiBPerSecond,omitempty"`

	// VolumeClaim is where the backup is written: the directory
	// backups/<this Backup's name> on the claim.
	// +optional
	VolumeClaim *BackupVolumeClaim `json:"volumeClaim,omitempty"`

	// S3 is where the backup is written: the objects under
	// <prefix>/<this Backup's name>/ in the bucket.
	// +optional
	S3 *S3Bucket `json:"s3,omitempty"`
}

// S3Bucket is a bucket of an S3-compatible object store, reached over
// HTTPS with keys from an opted-in Secret of this namespace. Its data is
// the user's, as a claim's is.
type S3Bucket struct {
	// Endpoint is the store's host or host:port (no scheme: HTTPS only).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?$`
	Endpoint string `json:"endpoint"`
	// Bucket is the bucket's name.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	Bucket string `json:"bucket"`
	// Prefix comes before each backup's name in its keys; no part of it
	// starts with a dot.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// Region is the bucket's region; empty, the store is asked.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][-a-z0-9]*$`
	// +optional
	Region string `json:"region,omitempty"`
	// CredentialsSecret is a Secret of this namespace, labelled
	// kubenats.io/allow: "true", with the keys accessKeyID and
	// secretAccessKey. Only the backup pod mounts it; the operator reads
	// no more than its labels and type.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	CredentialsSecret string `json:"credentialsSecret"`
	// CASecret is an opted-in Secret whose ca.crt the store's certificate
	// chains to; empty, the public roots the image carries.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	CASecret string `json:"caSecret,omitempty"`
}

// Key is where a backup named name lives in the bucket: its objects are
// Key/stream.arc.s2 and so on.
func (o *S3Bucket) Key(name string) string {
	if o.Prefix == "" {
		return name
	}
	return o.Prefix + "/" + name
}

// SecretNames are the Secrets o names.
func (o *S3Bucket) SecretNames() []string {
	if o.CASecret == "" || o.CASecret == o.CredentialsSecret {
		return []string{o.CredentialsSecret}
	}
	return []string{o.CredentialsSecret, o.CASecret}
}

// URL names the backup at key for people: s3://bucket/key.
func (o *S3Bucket) URL(key string) string { return "s3://" + o.Bucket + "/" + key }

// BackupVolumeClaim names a PersistentVolumeClaim of this namespace. Its
// data is the user's: deleting the Backup, the stream or the NatsCluster
// never deletes a backup written there.
type BackupVolumeClaim struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ClaimName string `json:"claimName"`
}

// BackupPhase is a Backup's short state.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type BackupPhase string

const (
	BackupPending   BackupPhase = "Pending"
	BackupRunning   BackupPhase = "Running"
	BackupSucceeded BackupPhase = "Succeeded"
	BackupFailed    BackupPhase = "Failed"
)

// BackupStatus is what a Backup holds, as the Job that took it reported.
type BackupStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions, Ready first: Ready is True once the backup is whole on
	// its claim.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`
	// JobName is the Job that takes the backup.
	// +optional
	JobName string `json:"jobName,omitempty"`
	// Path is the backup's directory on the claim, or s3://bucket/key
	// in the object store.
	// +optional
	Path string `json:"path,omitempty"`
	// Stream, FirstSequence, LastSequence, Messages and Bytes are the
	// stream's state as the snapshot began; Consumers counts the
	// consumers whose state the backup holds.
	// +optional
	Stream string `json:"stream,omitempty"`
	// +optional
	FirstSequence uint64 `json:"firstSequence,omitempty"`
	// +optional
	LastSequence uint64 `json:"lastSequence,omitempty"`
	// +optional
	Messages uint64 `json:"messages,omitempty"`
	// +optional
	Bytes uint64 `json:"bytes,omitempty"`
	// +optional
	Consumers int32 `json:"consumers,omitempty"`
	// Streams counts the streams of a backup of every stream; Messages,
	// Bytes, Consumers and DataSize are then their sums.
	// +optional
	Streams int32 `json:"streams,omitempty"`
	// DataFile is the snapshot's file in Path, DataSize its size and
	// SHA256 its checksum (hex), which a restore checks first.
	// +optional
	DataFile string `json:"dataFile,omitempty"`
	// +optional
	DataSize int64 `json:"dataSize,omitempty"`
	// +optional
	SHA256 string `json:"sha256,omitempty"`
	// StartedAt and CompletedAt bound the snapshot; Duration is the
	// difference, for people.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// +optional
	Duration string `json:"duration,omitempty"`
	// Progress is how far the backup has come while its Job runs; gone
	// once it ended.
	// +optional
	Progress *TransferProgress `json:"progress,omitempty"`
}

// TransferProgress is how far a running backup or restore has come, as
// its Job's pod told the operator at its last look (every few seconds).
type TransferProgress struct {
	// Stream is the stream being copied: one after the other in a backup
	// of every stream.
	// +optional
	Stream string `json:"stream,omitempty"`
	// DoneBytes is the archive's bytes written (a backup) or sent to the
	// server (a restore) so far.
	DoneBytes int64 `json:"doneBytes"`
	// TotalBytes is what DoneBytes heads for: for a restore the archive's
	// size (0 for a backup natscli took); for a backup the stream's bytes
	// as the snapshot began, which the compressed archive stays under.
	// +optional
	TotalBytes int64 `json:"totalBytes,omitempty"`
	// ObservedAt is when the pod said so.
	ObservedAt metav1.Time `json:"observedAt"`
}

// Backup is one stream's backup (docs/backup.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=nats
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 56",message="name may be at most 56 characters: the Job is backup-<name>, and a Job's name is a label value"
// +kubebuilder:validation:XValidation:rule="self.spec == oldSelf.spec",message="a Backup is immutable: make another Backup"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Stream",type=string,JSONPath=`.spec.stream`
// +kubebuilder:printcolumn:name="Streams",type=integer,JSONPath=`.status.streams`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Last",type=integer,JSONPath=`.status.lastSequence`
// +kubebuilder:printcolumn:name="Bytes",type=integer,JSONPath=`.status.bytes`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Backup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupSpec   `json:"spec"`
	Status BackupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BackupList is a list of Backups.
type BackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Backup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Backup{}, &BackupList{})
}

// ClusterKey is where b's NatsCluster is.
func (b *Backup) ClusterKey() (namespace, name string) {
	if b.Spec.ClusterNamespace != "" {
		return b.Spec.ClusterNamespace, b.Spec.Cluster
	}
	return b.Namespace, b.Spec.Cluster
}

// BackupJobName is the Job that takes b.
func (b *Backup) BackupJobName() string { return "backup-" + b.Name }

// RemoveJobName is the Job that deletes b's data (retention).
func (b *Backup) RemoveJobName() string { return "remove-" + b.Name }

// BackupPath is b's directory on its claim, as the Job mounts it.
func (b *Backup) BackupPath() string { return "backups/" + b.Name }

// Where is where b's backup is: its directory on the claim, or its
// s3://bucket/key.
func (b *Backup) Where() string {
	if s := b.Spec.S3; s != nil {
		return s.URL(s.Key(b.Name))
	}
	return b.BackupPath()
}
