package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NatsClusterSpec is the desired state of a NATS server cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas != 2 || (has(self.jetstream) && has(self.jetstream.enabled) && !self.jetstream.enabled)",message="2 replicas cannot form a JetStream quorum: use 1 or 3 or more, or disable JetStream"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.replicas) || oldSelf.replicas == 1 || !has(self.replicas) || self.replicas != 1 || (has(self.jetstream) && has(self.jetstream.enabled) && !self.jetstream.enabled)",message="a JetStream cluster cannot shrink to a single server: its clustered streams would lose their quorum"
// +kubebuilder:validation:XValidation:rule="!has(self.auth) || !has(self.auth.mode) || self.auth.mode != 'jwt' || !has(self.jetstream) || !has(self.jetstream.enabled) || self.jetstream.enabled",message="auth.mode jwt keeps the account JWTs on the JetStream volume: it needs JetStream enabled"
// +kubebuilder:validation:XValidation:rule="!has(self.mqtt) || !has(self.jetstream) || !has(self.jetstream.enabled) || self.jetstream.enabled",message="mqtt keeps its sessions and retained messages in JetStream: it needs JetStream enabled"
// +kubebuilder:validation:XValidation:rule="!has(self.mqtt) || !has(self.mqtt.streamReplicas) || self.mqtt.streamReplicas <= (has(self.replicas) ? self.replicas : 3)",message="mqtt.streamReplicas cannot exceed spec.replicas: a stream has at most one replica per server"
// +kubebuilder:validation:XValidation:rule="!has(self.websocket) || !((has(self.websocket.port) ? self.websocket.port : 8080) in [4222, 6222, 7777, 8222])",message="websocket.port is taken: 4222 (clients), 6222 (routes), 7777 (metrics) and 8222 (monitoring) are the servers' own"
// +kubebuilder:validation:XValidation:rule="!has(self.mqtt) || !((has(self.mqtt.port) ? self.mqtt.port : 1883) in [4222, 6222, 7777, 8222])",message="mqtt.port is taken: 4222 (clients), 6222 (routes), 7777 (metrics) and 8222 (monitoring) are the servers' own"
// +kubebuilder:validation:XValidation:rule="!has(self.websocket) || !has(self.mqtt) || (has(self.websocket.port) ? self.websocket.port : 8080) != (has(self.mqtt.port) ? self.mqtt.port : 1883)",message="websocket.port and mqtt.port must differ"
// +kubebuilder:validation:XValidation:rule="!((has(self.websocket) && has(self.websocket.from)) || (has(self.mqtt) && has(self.mqtt.from))) || (has(self.networkPolicy) && has(self.networkPolicy.enabled) && self.networkPolicy.enabled)",message="websocket.from and mqtt.from admit clients through the NetworkPolicy: they need networkPolicy.enabled"
// +kubebuilder:validation:XValidation:rule="!has(self.leafnodes) || !has(self.leafnodes.accept) || !has(self.auth) || !has(self.auth.mode) || self.auth.mode == 'users' || self.auth.mode == 'jwt'",message="leafnodes.accept needs auth.mode users or jwt: leafnodes always authenticate"
// +kubebuilder:validation:XValidation:rule="!has(self.leafnodes) || !has(self.leafnodes.accept) || !has(self.leafnodes.accept.secretRef) || !has(self.auth) || !has(self.auth.mode) || self.auth.mode == 'users'",message="leafnodes.accept.secretRef applies to auth.mode users only: in mode jwt leafnodes present a NatsUser's creds"
// +kubebuilder:validation:XValidation:rule="!has(self.takeover) || (has(self.auth) && has(self.auth.mode) && (self.auth.mode == 'none' || self.auth.mode == 'token'))",message="takeover needs auth.mode none or token: while the chart's servers and kubenats' route to each other, clients and JetStream must stay in the chart's accounts ($G and $SYS), and modes users and jwt move them into accounts of their own (docs/migration.md)"
// +kubebuilder:validation:XValidation:rule="has(self.takeover) == has(oldSelf.takeover) && (!has(self.takeover) || self.takeover == oldSelf.takeover)",message="takeover is set when the cluster is created and then kept: the StatefulSet's selector and claim names follow the chart's"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !has(self.replicas) || self.replicas > 1 || (has(self.jetstream) && has(self.jetstream.enabled) && !self.jetstream.enabled)",message="a gateway with JetStream needs 3 or more replicas: nats-server runs JetStream in a supercluster only clustered (\"JetStream cluster requires configured routes\"); disable JetStream for a single server"
type NatsClusterSpec struct {
	// Replicas is the number of NATS servers. JetStream needs 1, or 3 or more.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Version is the NATS server version, used as the image tag.
	// +kubebuilder:default="2.15.3"
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Version string `json:"version,omitempty"`

	// Image overrides the whole server image (registry/repository:tag). The
	// version still names what the operator expects to run.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Service shapes the client Service.
	// +optional
	Service ServiceSpec `json:"service,omitempty"`

	// Auth selects how clients authenticate.
	// +kubebuilder:default={}
	// +optional
	Auth AuthSpec `json:"auth,omitempty"`

	// TLS secures routes (mutual TLS by default), clients and monitoring.
	// +kubebuilder:default={}
	// +optional
	TLS TLSSpec `json:"tls,omitempty"`

	// JetStream configures persistence.
	// +kubebuilder:default={}
	// +optional
	JetStream JetStreamSpec `json:"jetstream,omitempty"`

	// Resources of the nats container. Unset means the operator's defaults;
	// memory requests should equal limits (nats-server advice). A memory
	// limit must be between 64Mi and 16Ti.
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !('memory' in self.limits) || (quantity(string(self.limits['memory'])).compareTo(quantity('64Mi')) >= 0 && quantity(string(self.limits['memory'])).compareTo(quantity('16Ti')) <= 0)",message="resources.limits.memory must be between 64Mi and 16Ti"
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// PodTemplate holds the pod settings users commonly need. It is a closed
	// list on purpose: a free-form template merge could undo the hardening.
	// +optional
	PodTemplate PodTemplateSpec `json:"podTemplate,omitempty"`

	// Config is merged into nats.conf after the operator's safe defaults:
	// each key is a top-level nats.conf setting, from an allow-list of
	// settings that take no path, open no listener and leave authentication
	// alone: connect_error_reports, debug, disable_sublist_cache, logtime,
	// logtime_utc, max_closed_clients, max_connections, max_control_line,
	// max_payload, max_pending, max_sub_tokens, max_subscriptions,
	// max_traced_msg_len, no_fast_producer_stall, ping_interval, ping_max,
	// reconnect_error_reports, server_metadata, server_tags, trace,
	// trace_headers, trace_verbose, write_deadline, write_timeout. Keys
	// match in any letter case, as nats-server matches them ('-' is not
	// '_'). Other keys are refused at admission (by the
	// ValidatingAdmissionPolicy in config/admission: CEL on a CRD cannot see
	// a field of free-form values) and by the operator (ConfigInvalid), and
	// the result is checked with nats-server's own parser before any server
	// sees it.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Config map[string]apiextensionsv1.JSON `json:"config,omitempty"`

	// NetworkPolicy admits to each server port only who needs it. Off
	// unless enabled; without it, the NetworkPolicy <name>-monitoring-ports
	// closes the monitor and metrics ports to all but the operator and the
	// scrapers spec.monitoring.from names (docs/networkpolicy.md).
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// Mesh puts the servers into a service mesh (Istio). Off unless set.
	// +optional
	Mesh *MeshSpec `json:"mesh,omitempty"`

	// WebSocket serves NATS over WebSocket (docs/websocket-mqtt.md). Off
	// unless set.
	// +optional
	WebSocket *WebSocketSpec `json:"websocket,omitempty"`

	// MQTT serves MQTT clients (docs/websocket-mqtt.md). Off unless set;
	// needs JetStream.
	// +optional
	MQTT *MQTTSpec `json:"mqtt,omitempty"`

	// Monitoring serves Prometheus metrics of every server, stream and
	// consumer (docs/monitoring.md). Off unless enabled.
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// Leafnodes accepts leafnodes and dials hubs (docs/topologies.md).
	// +optional
	Leafnodes *LeafnodesSpec `json:"leafnodes,omitempty"`

	// Gateway joins a supercluster (docs/topologies.md).
	// +optional
	Gateway *GatewaySpec `json:"gateway,omitempty"`

	// Takeover takes over the servers of a running release of the official
	// NATS Helm chart (docs/migration.md). Set when the cluster is created,
	// and kept: its StatefulSet keeps the chart's selector and claim names.
	// +optional
	Takeover *TakeoverSpec `json:"takeover,omitempty"`
}

// ServiceType is the type of the client Service.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// ServiceSpec shapes the client Service.
//
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerSourceRanges) || (has(self.type) && self.type == 'LoadBalancer')",message="loadBalancerSourceRanges needs type LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerClass) || (has(self.type) && self.type == 'LoadBalancer')",message="loadBalancerClass needs type LoadBalancer"
type ServiceSpec struct {
	// Type of the client Service. Unset means ClusterIP.
	// +optional
	Type ServiceType `json:"type,omitempty"`

	// Annotations added to the client Service.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// LoadBalancerClass of the client Service (type LoadBalancer only).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`

	// LoadBalancerSourceRanges restricts who may reach a LoadBalancer.
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r))",message="loadBalancerSourceRanges must be CIDRs such as 203.0.113.0/24"
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`

	// ExternalEndpoint overrides the external endpoint reported in status,
	// for clusters reached through a proxy or DNS name of the user's own.
	// +kubebuilder:validation:Pattern=`^(nats|tls)://[^\s/]+$`
	// +kubebuilder:validation:MaxLength=512
	// +optional
	ExternalEndpoint string `json:"externalEndpoint,omitempty"`
}

// PodTemplateSpec holds the pod settings users commonly need.
//
// +kubebuilder:validation:XValidation:rule="!has(self.labels) || !self.labels.exists(k, k.startsWith('app.kubernetes.io/'))",message="podTemplate.labels may not set app.kubernetes.io/ labels: the operator selects pods by them"
type PodTemplateSpec struct {
	// Labels added to every pod.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to every pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// NodeSelector of every pod.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of every pod.
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity of every pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TopologySpreadConstraints of every pod. Unset: spread over hostnames,
	// preferred (ScheduleAnyway).
	// +listType=atomic
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// PriorityClassName of every pod.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// ImagePullSecrets of every pod.
	// +listType=atomic
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// Phase is a one-word summary of a NatsCluster, for printer columns.
type Phase string

const (
	// PhaseInstalling means the cluster is not serving yet or is changing.
	PhaseInstalling Phase = "Installing"
	// PhaseReady means every part is ready.
	PhaseReady Phase = "Ready"
	// PhaseFailed means the operator cannot proceed without the user's help.
	PhaseFailed Phase = "Failed"
)

// VersionSource says where status.serverVersion comes from.
// +kubebuilder:validation:Enum=Observed;Configured
type VersionSource string

const (
	// VersionObserved was read from a running server's /varz.
	VersionObserved VersionSource = "Observed"
	// VersionConfigured is spec.version: no server answered.
	VersionConfigured VersionSource = "Configured"
)

// Endpoint is where clients reach the cluster.
type Endpoint struct {
	// Internal is the in-cluster URL, nats://<name>.<namespace>.svc:4222.
	Internal string `json:"internal,omitempty"`
	// External is the URL from outside the cluster, when there is one.
	External string `json:"external,omitempty"`
	// NodePort is the client port on every node, for type NodePort.
	NodePort int32 `json:"nodePort,omitempty"`
}

// NatsClusterStatus is the observed state of a NatsCluster.
type NatsClusterStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase summarises the conditions.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Conditions, Ready first.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Replicas is the number of servers that exist.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of servers that pass their readiness probe.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// ServerVersion is the version the servers run.
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`
	// ServerVersionSource says whether ServerVersion was observed or configured.
	// +optional
	ServerVersionSource VersionSource `json:"serverVersionSource,omitempty"`
	// Endpoint is where clients connect.
	// +optional
	Endpoint Endpoint `json:"endpoint,omitempty"`
	// CertificatesExpiry is when the first of the servers' certificates
	// expires; renewal comes well before.
	// +optional
	CertificatesExpiry *metav1.Time `json:"certificatesExpiry,omitempty"`
	// CredentialsSecretRef names a Secret with a ready-to-use url (credentials
	// included) and the separate fields a client library wants.
	// +optional
	CredentialsSecretRef *corev1.LocalObjectReference `json:"credentialsSecretRef,omitempty"`
	// Takeover is how far the takeover of a chart release has come.
	// +optional
	Takeover *TakeoverStatus `json:"takeover,omitempty"`

	// Leaders counts the stream and consumer groups each server leads, as
	// the servers last reported them (with spec.jetstream.balanceLeaders).
	// +listType=map
	// +listMapKey=server
	// +kubebuilder:validation:MaxItems=99
	// +optional
	Leaders []ServerLeaders `json:"leaders,omitempty"`
	// Zones lists the servers in each zone, by their pods' zone labels
	// (the node's, which Kubernetes copies onto the pod when it is
	// scheduled); empty when no server's node names a zone.
	// +listType=map
	// +listMapKey=zone
	// +kubebuilder:validation:MaxItems=99
	// +optional
	Zones []ZoneServers `json:"zones,omitempty"`
	// MetaLeader is the JetStream meta group's leader, as most of the
	// servers that answered name it; empty when they do not agree or
	// were not asked.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	MetaLeader string `json:"metaLeader,omitempty"`
	// Carried are the request annotations (kubenats.io/step-down,
	// kubenats.io/evacuate) last carried out: a value seen here is done.
	// +optional
	Carried *CarriedRequests `json:"carried,omitempty"`
}

// ZoneServers are the servers running in one zone.
type ZoneServers struct {
	// Zone is the zone's name; "" for servers on nodes without one.
	// +kubebuilder:validation:MaxLength=63
	Zone string `json:"zone"`
	// +kubebuilder:validation:MaxItems=99
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	Servers []string `json:"servers"`
}

// ServerLeaders is how many Raft groups one server leads.
type ServerLeaders struct {
	// +kubebuilder:validation:MaxLength=253
	Server string `json:"server"`
	// Groups are the streams and consumers it leads.
	Groups int32 `json:"groups"`
}

// NatsCluster is a clustered NATS server with JetStream.
//
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="name may be at most 52 characters: child objects and pods add suffixes"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.takeover) || self.spec.takeover.helmRelease == self.metadata.name",message="takeover.helmRelease must be the NatsCluster's name: the servers keep their pod names and the clients their Services"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=nc,categories=nats
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.serverVersion`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint.internal`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NatsCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec NatsClusterSpec `json:"spec,omitempty"`
	// Status is the operator's. Until its first pass it reads
	// observedGeneration 0 (a default), so that GitOps tools (kstatus)
	// read a resource just made as in progress, not as current.
	// +kubebuilder:default={observedGeneration:0}
	Status NatsClusterStatus `json:"status,omitempty"`
}

// NatsClusterList is a list of NatsClusters.
//
// +kubebuilder:object:root=true
type NatsClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NatsCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NatsCluster{}, &NatsClusterList{})
}
