package v1alpha1

// MQTTSpec serves MQTT 3.1.1 (devices). Clients authenticate exactly as
// on the client port (spec.auth): the MQTT user name and password are the
// users' (mode users), the password is the token (mode token), or the
// password is the user's JWT (mode jwt). TLS is the client listener's:
// with spec.tls.client the MQTT port serves its certificate, TLS from the
// first byte, renewed by reload; without it, plaintext with
// authentication, as the client port.
//
// nats-server keeps MQTT's sessions, retained messages and QoS 1
// deliveries in JetStream streams of the users' account ($MQTT_sess,
// $MQTT_rmsgs, $MQTT_msgs, ...): MQTT needs JetStream, and each server a
// unique server_name (kubenats names every server after its pod).
//
// streamReplicas changes by reload (new streams only: nats-server does not
// rescale the streams it already made); the port and the rest restart the
// servers one at a time (the gated rollout).
//
// +kubebuilder:validation:XValidation:rule="!has(self.from) || size(self.from) > 0",message="mqtt.from, when set, needs at least one peer; leave it out to admit spec.networkPolicy.clients"
type MQTTSpec struct {
	// Port the servers listen on for MQTT clients.
	// +kubebuilder:default=1883
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// StreamReplicas is the replica count of the streams nats-server makes
	// for MQTT's sessions and retained messages. Unset: nats-server's
	// choice (up to 3, as many as there are servers). At most
	// spec.replicas.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	StreamReplicas *int32 `json:"streamReplicas,omitempty"`

	// From may reach the MQTT port, with spec.networkPolicy.enabled.
	// Unset: the peers of spec.networkPolicy.clients (none when that is
	// unset too: the port is then closed to everyone).
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	From []NetworkPolicyPeer `json:"from,omitempty"`

	// MeshPermissive keeps the MQTT port PERMISSIVE in the Istio mesh
	// whatever spec.mesh.istio.mtls says, for devices outside the mesh.
	// MQTT's client speaks first (CONNECT, or its TLS handshake), so a
	// sidecar detects and serves it. Off by default: the exception loosens
	// the platform's policy for this port.
	// +optional
	MeshPermissive bool `json:"meshPermissive,omitempty"`
}

// MQTTEnabled reports whether c serves MQTT.
func (s *NatsClusterSpec) MQTTEnabled() bool { return s.MQTT != nil }

// MQTTTLS reports whether the MQTT listener serves TLS.
func (s *NatsClusterSpec) MQTTTLS() bool { return s.MQTT != nil }

// withDefaults defaults m as the API server would.
func (m *MQTTSpec) withDefaults() {
	if m != nil && m.Port == 0 {
		m.Port = DefaultMQTTPort
	}
}
