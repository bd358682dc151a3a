package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TLSSpec says where each of a cluster's listeners gets its certificate.
// Routes between the servers use mutual TLS by default; clients and
// monitoring use TLS when asked.
type TLSSpec struct {
	// Routes secure the connections between the servers.
	// +kubebuilder:default={}
	// +optional
	Routes RouteTLSSpec `json:"routes,omitempty"`

	// Client secures the client port (4222), and the WebSocket and MQTT
	// ports with it. Unset or empty: TLS from a CA the operator keeps for
	// the cluster, clients without TLS refused.
	// +kubebuilder:default={}
	// +optional
	Client *ClientTLSSpec `json:"client,omitempty"`

	// Monitor serves the monitoring port (8222) over https. nats-server
	// serves it with the client certificate, so it needs spec.tls.client.
	// +optional
	Monitor *MonitorTLSSpec `json:"monitor,omitempty"`
}

// RouteTLSSpec secures the routes. Unless disabled, every route is mutual
// TLS: each server presents a certificate valid for its own DNS names and
// accepts only peers whose certificate chains to the same CA. Without
// secretName the operator keeps a CA per cluster and issues the route
// certificate itself. Routes also always authenticate with a password,
// TLS or not.
//
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || self.enabled || !has(self.secretName)",message="routes: secretName needs route TLS enabled"
type RouteTLSSpec struct {
	// Enabled turns route TLS on (the default). Turning it off, or on for a
	// cluster that ran without it, restarts every server at once: servers
	// with and without route TLS cannot route to each other (see
	// docs/tls.md, "Route TLS transition").
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// SecretName is a kubernetes.io/tls Secret of your own with tls.crt,
	// tls.key and ca.crt. Its certificate must be valid for server and
	// client authentication and carry the servers' DNS names
	// (*.<name>-headless, also with the namespace, .svc and the cluster
	// domain).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// IssuerRef is refused for new specs and ignored where a cluster still
	// has it: the route CA is always the operator's own per-cluster CA
	// (<name>-ca). Asking an issuer for a CA would hand the tenant a
	// sub-CA of the issuer's CA, which everything trusting that CA would
	// trust too (docs/tls.md, "Route certificates from an issuer"). A
	// cluster that named one moves to the operator's own CA without
	// cutting its routes, and reports that the field is ignored; remove
	// it from the spec. An object stored before keeps updating as long as
	// this field stays as it is (CRD validation ratcheting).
	// +kubebuilder:validation:XValidation:rule="false",message="spec.tls.routes.issuerRef is no longer accepted: the route CA is always the operator's own per-cluster CA, never one an issuer signs; remove the field (route TLS stays on)"
	// +optional
	IssuerRef *IssuerRef `json:"issuerRef,omitempty"`
}

// ClientTLSSpec secures the client port. With neither secretName nor
// issuerRef the operator keeps a client CA per cluster (<name>-client-ca,
// never mounted) and the certificate it signs (<name>-client-tls), and
// hands the CA to clients in the credentials Secret (ca.crt).
//
// +kubebuilder:validation:XValidation:rule="!(has(self.secretName) && has(self.issuerRef))",message="client TLS: set secretName or issuerRef, not both"
// +kubebuilder:validation:XValidation:rule="!(has(self.verify) && self.verify) || has(self.secretName) || has(self.issuerRef)",message="client TLS: verify needs client certificates from your own CA: name secretName or issuerRef (the operator's client CA issues no client certificates)"
// +kubebuilder:validation:XValidation:rule="!(has(self.allowPlaintext) && self.allowPlaintext && has(self.handshakeFirst) && self.handshakeFirst)",message="client TLS: handshakeFirst refuses clients that do not start with TLS, allowPlaintext accepts them: set one"
type ClientTLSSpec struct {
	// SecretName is a Secret of your own with tls.crt, tls.key and ca.crt,
	// valid for the names clients use.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// IssuerRef has cert-manager issue the certificate for the client
	// Service's names (short, with namespace, .svc, cluster domain), the
	// headless Service's wildcard (never localhost).
	// +optional
	IssuerRef *IssuerRef `json:"issuerRef,omitempty"`

	// Verify requires every client to present a certificate that chains to
	// ca.crt (mutual TLS).
	// +optional
	Verify bool `json:"verify,omitempty"`

	// HandshakeFirst starts TLS before the server says anything, for
	// clients that connect TLS-first.
	// +optional
	HandshakeFirst bool `json:"handshakeFirst,omitempty"`

	// AllowPlaintext has the servers accept clients that do not speak TLS
	// beside those that do (nats-server's allow_non_tls); the URLs in the
	// credentials Secret stay tls://, and the operator's own connections
	// always use TLS. Meant for moving clients over: set it to false once
	// they all connect with TLS. Unset: false for a new cluster; a cluster
	// whose servers an earlier release ran without client TLS keeps
	// accepting plaintext until this is set to false (docs/tls.md, Moving
	// clients to TLS). Changing it restarts the servers one at a time.
	// +optional
	AllowPlaintext *bool `json:"allowPlaintext,omitempty"`
}

// MonitorTLSSpec serves monitoring over https.
type MonitorTLSSpec struct {
	// Enabled serves https on the monitoring port (the default once the
	// block is there).
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// IssuerRef names a cert-manager issuer.
type IssuerRef struct {
	// Name of the issuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Kind is Issuer (in the cluster's namespace, the default) or
	// ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`

	// Group of the issuer; cert-manager.io unless an external issuer.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default=cert-manager.io
	// +optional
	Group string `json:"group,omitempty"`

	// Duration of the certificates it issues; cert-manager's default (90
	// days) when unset, at least 1h.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// RenewBefore is how long before expiry cert-manager renews them;
	// cert-manager's default (a third of the duration) when unset.
	// +optional
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
}

// RouteTLSEnabled reports whether routes use TLS (the default).
func (s *NatsClusterSpec) RouteTLSEnabled() bool {
	return s.TLS.Routes.Enabled == nil || *s.TLS.Routes.Enabled
}

// MonitorTLSEnabled reports whether monitoring is served over https.
func (s *NatsClusterSpec) MonitorTLSEnabled() bool {
	m := s.TLS.Monitor
	return m != nil && (m.Enabled == nil || *m.Enabled)
}

// ClientTLS is spec.tls.client as the API server defaults it: the client
// port always serves TLS.
func (s *NatsClusterSpec) ClientTLS() ClientTLSSpec {
	if s.TLS.Client == nil {
		return ClientTLSSpec{}
	}
	return *s.TLS.Client
}

// GeneratesClientPKI reports whether the operator keeps the client CA and
// certificate itself (neither a Secret nor an issuer named).
func (s *NatsClusterSpec) GeneratesClientPKI() bool {
	ct := s.ClientTLS()
	return ct.SecretName == "" && ct.IssuerRef == nil
}

// AcceptsPlaintextClients reports whether the servers accept clients
// without TLS beside those with it. An unset allowPlaintext reads false
// here: the controller settles it from what the servers ran before
// (plan.ClientPlaintext) before anything reads it.
func (s *NatsClusterSpec) AcceptsPlaintextClients() bool {
	ct := s.ClientTLS()
	return ct.AllowPlaintext != nil && *ct.AllowPlaintext && !ct.HandshakeFirst
}
