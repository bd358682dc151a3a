package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KeyValueSpec is a JetStream key-value bucket.
//
// +kubebuilder:validation:XValidation:rule="self.bucket == oldSelf.bucket",message="bucket is immutable: a renamed bucket is a new bucket"
// +kubebuilder:validation:XValidation:rule="self.storage == oldSelf.storage",message="storage cannot change on the server"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.limitMarkerTtl) || has(self.limitMarkerTtl)",message="limitMarkerTtl cannot be cleared: it turned on the bucket's message TTLs for good"
// +kubebuilder:validation:XValidation:rule="has(self.account) == has(oldSelf.account) && (!has(self.account) || self.account == oldSelf.account)",message="account is immutable: the same name in another account is another object"
// +kubebuilder:validation:XValidation:rule="!has(self.account) || has(self.cluster)",message="account applies to a NatsCluster target (cluster), not to a connection"
type KeyValueSpec struct {
	Target    `json:",inline"`
	Lifecycle `json:",inline"`

	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-]+$`
	// +kubebuilder:validation:MaxLength=255
	Bucket string `json:"bucket"`
	// +optional
	Description string `json:"description,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxValueSize int32 `json:"maxValueSize,omitempty"`
	// History is how many values per key are kept.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	History uint8 `json:"history,omitempty"`
	// +optional
	TTL Duration `json:"ttl,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// +kubebuilder:default=file
	// +optional
	Storage StorageType `json:"storage,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=1
	// +optional
	Replicas int `json:"replicas,omitempty"`
	// +optional
	Placement *Placement `json:"placement,omitempty"`
	// +optional
	Republish *Republish `json:"republish,omitempty"`
	// +optional
	Mirror *StreamSource `json:"mirror,omitempty"`
	// +listType=atomic
	// +optional
	Sources []StreamSource `json:"sources,omitempty"`
	// +optional
	Compression bool `json:"compression,omitempty"`
	// +optional
	LimitMarkerTTL Duration `json:"limitMarkerTtl,omitempty"`
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// KeyValue is a JetStream key-value bucket kept equal to its spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kv,categories=nats
// +kubebuilder:printcolumn:name="Bucket",type=string,JSONPath=`.spec.bucket`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeyValue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KeyValueSpec `json:"spec"`
	// Status is the operator's. Until its first pass it reads
	// observedGeneration 0 (a default), so that GitOps tools (kstatus)
	// read a resource just made as in progress, not as current.
	// +kubebuilder:default={observedGeneration:0}
	Status JetStreamStatus `json:"status,omitempty"`
}

// KeyValueList is a list of KeyValues.
//
// +kubebuilder:object:root=true
type KeyValueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeyValue `json:"items"`
}

func init() { SchemeBuilder.Register(&KeyValue{}, &KeyValueList{}) }
