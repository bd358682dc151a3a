package v1alpha1

// Default ports of the WebSocket and MQTT listeners (the official chart's).
const (
	DefaultWebSocketPort int32 = 8080
	DefaultMQTTPort      int32 = 1883
)

// WebSocketSpec serves NATS over WebSocket (browsers, and clients behind
// proxies that only pass HTTP). Clients authenticate exactly as on the
// client port (spec.auth: the same users, token or JWTs). TLS is the
// client listener's: the WebSocket port serves spec.tls.client's
// certificate (Secret or cert-manager issuer), renewed by reload as that
// one is. Without spec.tls.client nats-server refuses a WebSocket
// listener, and so does kubenats, unless noTLS says that a proxy in front
// terminates TLS.
//
// Changes to this block restart the servers one at a time (the gated
// rollout): nats-server reloads only a WebSocket listener's certificate.
//
// +kubebuilder:validation:XValidation:rule="!has(self.from) || size(self.from) > 0",message="websocket.from, when set, needs at least one peer; leave it out to admit spec.networkPolicy.clients"
type WebSocketSpec struct {
	// Port the servers listen on for WebSocket clients.
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// NoTLS serves WebSocket in plaintext. Only for a proxy in front (an
	// Ingress, a Gateway) that terminates TLS: clients' credentials cross
	// the hop between proxy and server in the clear. Needed, and refused
	// otherwise, when spec.tls.client is unset.
	// +optional
	NoTLS bool `json:"noTLS,omitempty"`

	// AllowedOrigins are the only web origins (scheme://host[:port]) whose
	// browsers may connect: a WebSocket upgrade with another Origin header
	// is refused with 403. Unset: any origin (non-browser clients send
	// none).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^https?://[^\s/?#]+$`
	// +listType=set
	// +optional
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`

	// Compression offers per-message deflate to clients that ask for it.
	// +optional
	Compression bool `json:"compression,omitempty"`

	// From may reach the WebSocket port, with spec.networkPolicy.enabled.
	// Unset: the peers of spec.networkPolicy.clients (none when that is
	// unset too: the port is then closed to everyone).
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	From []NetworkPolicyPeer `json:"from,omitempty"`

	// MeshPermissive keeps the WebSocket port PERMISSIVE in the Istio mesh
	// whatever spec.mesh.istio.mtls says, for browsers and proxies outside
	// the mesh. WebSocket's client speaks first, so a sidecar detects and
	// serves its plaintext or its own TLS. Off by default: the exception
	// loosens the platform's policy for this port.
	// +optional
	MeshPermissive bool `json:"meshPermissive,omitempty"`

	// Ingress publishes the WebSocket port through an Ingress, for
	// browsers outside the Kubernetes cluster. Unset: no Ingress.
	// +optional
	Ingress *WebSocketIngress `json:"ingress,omitempty"`
}

// WebSocketIngress is the Ingress in front of the WebSocket port. The
// ingress controller terminates TLS for Host and passes the upgrade to the
// client Service's websocket port: over TLS when the servers serve it (the
// Service port's appProtocol is https; some controllers want an annotation
// saying so too), in the clear inside the cluster with websocket.noTLS.
// With spec.networkPolicy, the controller's pods must be among
// websocket.from.
type WebSocketIngress struct {
	// Host clients connect to, as wss://<host>/.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host"`

	// ClassName is the IngressClass. Unset: the cluster's default class.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ClassName *string `json:"className,omitempty"`

	// TLSSecretName is the Secret (type kubernetes.io/tls, in the
	// cluster's namespace) with Host's certificate, which the ingress
	// controller serves. Required: clients' credentials never cross the
	// Ingress in the clear. cert-manager's ingress-shim creates it when the
	// annotations ask for an issuer.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	TLSSecretName string `json:"tlsSecretName"`

	// Annotations of the Ingress, for its controller: timeouts, the
	// backend protocol, cert-manager's issuer.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 316 && size(self[k]) <= 4096)",message="an annotation's key is at most 316 characters and its value at most 4096"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// WebSocketEnabled reports whether c serves WebSocket.
func (s *NatsClusterSpec) WebSocketEnabled() bool { return s.WebSocket != nil }

// WebSocketIngressEnabled reports whether c publishes its WebSocket port
// through an Ingress.
func (s *NatsClusterSpec) WebSocketIngressEnabled() bool {
	return s.WebSocket != nil && s.WebSocket.Ingress != nil
}

// WebSocketTLS reports whether the WebSocket listener serves TLS.
func (s *NatsClusterSpec) WebSocketTLS() bool {
	return s.WebSocket != nil && !s.WebSocket.NoTLS
}

// withDefaults defaults w as the API server would.
func (w *WebSocketSpec) withDefaults() {
	if w != nil && w.Port == 0 {
		w.Port = DefaultWebSocketPort
	}
}
