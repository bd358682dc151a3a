package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConsumerSpec is a durable JetStream consumer, pull or push (with
// deliverSubject).
//
// +kubebuilder:validation:XValidation:rule="self.streamName == oldSelf.streamName",message="streamName is immutable"
// +kubebuilder:validation:XValidation:rule="self.durableName == oldSelf.durableName",message="durableName is immutable: a renamed consumer is a new consumer"
// +kubebuilder:validation:XValidation:rule="self.deliverPolicy == oldSelf.deliverPolicy",message="deliverPolicy cannot change on the server"
// +kubebuilder:validation:XValidation:rule="self.ackPolicy == oldSelf.ackPolicy",message="ackPolicy cannot change on the server"
// +kubebuilder:validation:XValidation:rule="has(self.deliverSubject) == has(oldSelf.deliverSubject)",message="a consumer cannot switch between pull and push"
// +kubebuilder:validation:XValidation:rule="!has(self.filterSubject) || !has(self.filterSubjects)",message="set filterSubject or filterSubjects, not both"
// +kubebuilder:validation:XValidation:rule="self.deliverPolicy != 'byStartSequence' || has(self.optStartSeq)",message="deliverPolicy byStartSequence needs optStartSeq"
// +kubebuilder:validation:XValidation:rule="self.deliverPolicy != 'byStartTime' || has(self.optStartTime)",message="deliverPolicy byStartTime needs optStartTime"
// +kubebuilder:validation:XValidation:rule="!has(self.deliverGroup) || has(self.deliverSubject)",message="deliverGroup needs deliverSubject (push)"
// +kubebuilder:validation:XValidation:rule="!has(self.flowControl) || !self.flowControl || has(self.heartbeatInterval)",message="flowControl needs heartbeatInterval"
// +kubebuilder:validation:XValidation:rule="self.replayPolicy == oldSelf.replayPolicy",message="replayPolicy cannot change on the server"
// +kubebuilder:validation:XValidation:rule="has(self.memStorage) == has(oldSelf.memStorage) && (!has(self.memStorage) || self.memStorage == oldSelf.memStorage)",message="memStorage cannot change on the server"
// +kubebuilder:validation:XValidation:rule="(has(self.optStartSeq) ? self.optStartSeq : 0) == (has(oldSelf.optStartSeq) ? oldSelf.optStartSeq : 0)",message="optStartSeq cannot change on the server"
// +kubebuilder:validation:XValidation:rule="has(self.optStartTime) == has(oldSelf.optStartTime) && (!has(self.optStartTime) || self.optStartTime == oldSelf.optStartTime)",message="optStartTime cannot change on the server"
// +kubebuilder:validation:XValidation:rule="(has(self.heartbeatInterval) ? duration(self.heartbeatInterval) : duration('0s')) == (has(oldSelf.heartbeatInterval) ? duration(oldSelf.heartbeatInterval) : duration('0s'))",message="heartbeatInterval cannot change on the server"
// +kubebuilder:validation:XValidation:rule="(has(self.flowControl) && self.flowControl) == (has(oldSelf.flowControl) && oldSelf.flowControl)",message="flowControl cannot change on the server"
// +kubebuilder:validation:XValidation:rule="(has(self.maxWaiting) ? self.maxWaiting : 0) == (has(oldSelf.maxWaiting) ? oldSelf.maxWaiting : 0)",message="maxWaiting cannot change on the server"
// +kubebuilder:validation:XValidation:rule="self.ackPolicy != 'flow_control' || has(self.deliverSubject)",message="ackPolicy flow_control needs deliverSubject (push)"
// +kubebuilder:validation:XValidation:rule="self.ackPolicy != 'flow_control' || (!has(self.backoff) && (!has(self.maxDeliver) || self.maxDeliver <= 0))",message="ackPolicy flow_control redelivers by flow control: backoff and a positive maxDeliver do not apply"
// +kubebuilder:validation:XValidation:rule="has(self.account) == has(oldSelf.account) && (!has(self.account) || self.account == oldSelf.account)",message="account is immutable: the same name in another account is another object"
// +kubebuilder:validation:XValidation:rule="!has(self.account) || has(self.cluster)",message="account applies to a NatsCluster target (cluster), not to a connection"
type ConsumerSpec struct {
	Target    `json:",inline"`
	Lifecycle `json:",inline"`

	// StreamName is the stream on the server (its spec.name).
	// +kubebuilder:validation:MinLength=1
	StreamName string `json:"streamName"`
	// +kubebuilder:validation:Pattern=`^[^.*>\s/\\]+$`
	// +kubebuilder:validation:MaxLength=255
	DurableName string `json:"durableName"`
	// +optional
	Description string `json:"description,omitempty"`
	// +kubebuilder:validation:Enum=all;last;new;byStartSequence;byStartTime;lastPerSubject
	// +kubebuilder:default=all
	// +optional
	DeliverPolicy string `json:"deliverPolicy,omitempty"`
	// +optional
	OptStartSeq uint64 `json:"optStartSeq,omitempty"`
	// +optional
	OptStartTime *metav1.Time `json:"optStartTime,omitempty"`
	// AckPolicy is explicit (the default), all, none, or flow_control
	// (nats-server 2.14+: acks follow flow-control replies, as durable
	// stream sourcing from a push consumer needs).
	// +kubebuilder:validation:Enum=none;all;explicit;flow_control
	// +kubebuilder:default=explicit
	// +optional
	AckPolicy string `json:"ackPolicy,omitempty"`
	// AckWait does not apply to ackPolicy flow_control, whose consumers
	// the server gives no ack wait.
	// +kubebuilder:default="30s"
	// +optional
	AckWait Duration `json:"ackWait,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxDeliver int `json:"maxDeliver,omitempty"`
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Backoff []Duration `json:"backoff,omitempty"`
	// +optional
	FilterSubject string `json:"filterSubject,omitempty"`
	// +listType=atomic
	// +optional
	FilterSubjects []string `json:"filterSubjects,omitempty"`
	// +kubebuilder:validation:Enum=instant;original
	// +kubebuilder:default=instant
	// +optional
	ReplayPolicy string `json:"replayPolicy,omitempty"`
	// +optional
	RateLimitBps uint64 `json:"rateLimitBps,omitempty"`
	// SampleFreq is a percentage such as "100%".
	// +kubebuilder:validation:Pattern=`^[0-9]{1,3}%?$`
	// +optional
	SampleFreq string `json:"sampleFreq,omitempty"`
	// +optional
	MaxWaiting int `json:"maxWaiting,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +optional
	MaxAckPending int `json:"maxAckPending,omitempty"`
	// +optional
	HeadersOnly bool `json:"headersOnly,omitempty"`
	// +optional
	MaxRequestBatch int `json:"maxRequestBatch,omitempty"`
	// +optional
	MaxRequestExpires Duration `json:"maxRequestExpires,omitempty"`
	// +optional
	MaxRequestMaxBytes int `json:"maxRequestMaxBytes,omitempty"`
	// +optional
	InactiveThreshold Duration `json:"inactiveThreshold,omitempty"`
	// Replicas; 0 inherits the stream's.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +optional
	Replicas int `json:"replicas,omitempty"`
	// +optional
	MemStorage bool `json:"memStorage,omitempty"`
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
	// PriorityPolicy is none, overflow, pinned_client or prioritized.
	// +kubebuilder:validation:Enum=none;overflow;pinned_client;prioritized
	// +optional
	PriorityPolicy string `json:"priorityPolicy,omitempty"`
	// +optional
	PriorityTimeout Duration `json:"priorityTimeout,omitempty"`
	// +listType=atomic
	// +optional
	PriorityGroups []string `json:"priorityGroups,omitempty"`
	// DeliverSubject makes this a push consumer.
	// +optional
	DeliverSubject string `json:"deliverSubject,omitempty"`
	// +optional
	DeliverGroup string `json:"deliverGroup,omitempty"`
	// +optional
	FlowControl bool `json:"flowControl,omitempty"`
	// +optional
	HeartbeatInterval Duration `json:"heartbeatInterval,omitempty"`
	// PauseUntil pauses delivery until this time; it is declared state like
	// any other field: a consumer paused or resumed by hand is set back to
	// it. Remove it, or set a past time, to resume.
	// +optional
	PauseUntil *metav1.Time `json:"pauseUntil,omitempty"`
}

// Consumer is a durable JetStream consumer kept equal to its spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=nats
// +kubebuilder:printcolumn:name="Stream",type=string,JSONPath=`.spec.streamName`
// +kubebuilder:printcolumn:name="Consumer",type=string,JSONPath=`.spec.durableName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Consumer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ConsumerSpec `json:"spec"`
	// Status is the operator's. Until its first pass it reads
	// observedGeneration 0 (a default), so that GitOps tools (kstatus)
	// read a resource just made as in progress, not as current.
	// +kubebuilder:default={observedGeneration:0}
	Status JetStreamStatus `json:"status,omitempty"`
}

// ConsumerList is a list of Consumers.
//
// +kubebuilder:object:root=true
type ConsumerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Consumer `json:"items"`
}

func init() { SchemeBuilder.Register(&Consumer{}, &ConsumerList{}) }
