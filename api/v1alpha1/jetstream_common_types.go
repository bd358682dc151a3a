package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Target names the NATS system a JetStream resource lives in: a NatsCluster
// that kubenats runs, or any NATS system by its address.
//
// +kubebuilder:validation:XValidation:rule="has(self.cluster) != has(self.connection)",message="set exactly one of cluster or connection"
type Target struct {
	// Cluster is a NatsCluster managed by kubenats. One in another namespace
	// must list this resource's namespace in spec.jetstream.allowedNamespaces.
	// +optional
	Cluster *ClusterRef `json:"cluster,omitempty"`
	// Connection reaches a NATS system kubenats does not run.
	// +optional
	Connection *Connection `json:"connection,omitempty"`
	// Account is the NatsAccount, in this namespace, the object lives in,
	// on a cluster in auth mode jwt (NACK's manifests name it the same
	// way). The operator manages the object as a user of that account it
	// keeps for itself, never with another account's rights.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	Account string `json:"account,omitempty"`
}

// ClusterRef names a NatsCluster.
type ClusterRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	Name string `json:"name"`
	// Namespace of the NatsCluster; unset means the resource's own.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Connection reaches a NATS system by its address. Credentials are
// references to Secrets, never inline.
type Connection struct {
	// Servers are NATS URLs (nats:// or tls://), one per entry, without
	// credentials in them. The operator refuses loopback, link-local and
	// API server addresses unless it runs with --allow-local-targets, and
	// the pods and Services of other namespaces than the resource's unless
	// it runs with --connection-allow-other-namespaces.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^(nats|tls)://[^\s@,/]+$`
	// +listType=atomic
	Servers []string `json:"servers"`
	// CredentialsSecretRef names a Secret in the resource's namespace holding
	// one of: `creds` (a creds file), `nkey` (an nkey seed), `token`, or
	// `user` and `password`.
	// +optional
	CredentialsSecretRef *LocalRef `json:"credentialsSecretRef,omitempty"`
	// TLSSecretRef names a Secret with `ca.crt`, and optionally `tls.crt` and
	// `tls.key` for a client certificate.
	// +optional
	TLSSecretRef *LocalRef `json:"tlsSecretRef,omitempty"`
	// JSDomain is the JetStream domain to address.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]{1,64}$`
	// +optional
	JSDomain string `json:"jsDomain,omitempty"`
}

// LocalRef names an object in the same namespace.
type LocalRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Lifecycle are the options every JetStream resource shares.
type Lifecycle struct {
	// PreventDelete leaves the server object in place when the resource is
	// deleted.
	// +optional
	PreventDelete bool `json:"preventDelete,omitempty"`
	// PreventUpdate only observes: drift is reported, nothing is written.
	// +optional
	PreventUpdate bool `json:"preventUpdate,omitempty"`
	// AdoptExisting takes over a server object of the same name that kubenats
	// did not create. Off by default: such an object is refused.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`
}

// Duration is a Go duration string such as 30s, 5m or 1h30m.
// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
// +kubebuilder:validation:MaxLength=64
type Duration string

// StorageType is where JetStream keeps messages.
// +kubebuilder:validation:Enum=file;memory
type StorageType string

// Placement pins the replicas to a cluster or tagged servers.
type Placement struct {
	// +optional
	Cluster string `json:"cluster,omitempty"`
	// +listType=atomic
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// SubjectTransform maps subjects from source to dest.
type SubjectTransform struct {
	Source string `json:"source"`
	Dest   string `json:"dest"`
}

// Republish republishes stored messages to another subject.
type Republish struct {
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination"`
	// +optional
	HeadersOnly bool `json:"headersOnly,omitempty"`
}

// StreamSource is a stream this stream mirrors or sources from.
type StreamSource struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// +optional
	OptStartSeq uint64 `json:"optStartSeq,omitempty"`
	// OptStartTime is an RFC 3339 time.
	// +optional
	OptStartTime *metav1.Time `json:"optStartTime,omitempty"`
	// +optional
	FilterSubject string `json:"filterSubject,omitempty"`
	// +listType=atomic
	// +optional
	SubjectTransforms []SubjectTransform `json:"subjectTransforms,omitempty"`
	// ExternalAPIPrefix and ExternalDeliverPrefix reach a stream in another
	// account or domain.
	// +optional
	ExternalAPIPrefix string `json:"externalApiPrefix,omitempty"`
	// +optional
	ExternalDeliverPrefix string `json:"externalDeliverPrefix,omitempty"`
	// Consumer sources through a durable push consumer on the origin
	// stream instead of an ephemeral one (nats-server 2.14+).
	// +optional
	Consumer *SourceConsumer `json:"consumer,omitempty"`
}

// SourceConsumer is the durable consumer a mirror or source reads through.
type SourceConsumer struct {
	// +kubebuilder:validation:Pattern=`^[^.*>\s/\\]+$`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	DeliverSubject string `json:"deliverSubject,omitempty"`
}

// JetStreamStatus is the status every JetStream resource shares. Nothing in
// it changes while the system is idle: no counters.
type JetStreamStatus struct {
	// ObservedGeneration is the generation this status describes, whether
	// the server holds it or not: Stalled True says the spec of this
	// generation cannot be applied (refused), Reconciling True that it is
	// on its way.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// SyncedGeneration is the generation whose spec the server object was
	// last brought to; below observedGeneration while a newer spec waits
	// or was refused.
	// +optional
	SyncedGeneration int64 `json:"syncedGeneration,omitempty"`
	// Conditions, Ready first.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ServerConfigHash is a hash of the server's configuration as the
	// operator last wrote it: a different hash on the server is drift.
	// +optional
	ServerConfigHash string `json:"serverConfigHash,omitempty"`
	// Cluster is the Raft group's view: leader and replicas.
	// +optional
	Cluster *RaftGroupStatus `json:"cluster,omitempty"`
	// Mirror is a mirror's distance from its origin, as the stream's
	// leader reported it at the last pass (every 30 seconds for a
	// mirror): for a standby, what a promotion now would leave behind.
	// +optional
	Mirror *MirrorStatus `json:"mirror,omitempty"`
	// Restore is how far the restore of spec.restore has come while its
	// Job runs (Streams only); gone once it ended.
	// +optional
	Restore *TransferProgress `json:"restore,omitempty"`
}

// MirrorStatus is how far a mirror is behind its origin.
type MirrorStatus struct {
	// Lag is how many of the origin's messages the mirror does not hold.
	Lag uint64 `json:"lag"`
	// LastContact is how long before the pass the mirror last heard from
	// its origin; empty when it never has.
	// +optional
	LastContact string `json:"lastContact,omitempty"`
}

// RaftGroupStatus is who leads a stream's replicas and whether they keep up.
type RaftGroupStatus struct {
	// +optional
	Leader string `json:"leader,omitempty"`
	// +listType=atomic
	// +optional
	Replicas []ReplicaStatus `json:"replicas,omitempty"`
}

// ReplicaStatus is one follower's health.
type ReplicaStatus struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
}
