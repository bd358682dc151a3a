package v1alpha1

// CASecretName holds the per-cluster CA the operator keeps for routes.
func (c *NatsCluster) CASecretName() string { return c.Name + "-ca" }

// RouteTLSSecretName holds the route certificate: the user's Secret, or the
// one the operator writes (GeneratesRoutePKI).
func (c *NatsCluster) RouteTLSSecretName() string {
	if n := c.Spec.TLS.Routes.SecretName; n != "" {
		return n
	}
	return c.Name + "-routes-tls"
}

// ClientTLSSecretName holds the client certificate: the user's Secret, or
// the one cert-manager (issuerRef) or the operator (the default) writes.
func (c *NatsCluster) ClientTLSSecretName() string {
	if n := c.Spec.ClientTLS().SecretName; n != "" {
		return n
	}
	return c.Name + "-client-tls"
}

// ClientCASecretName holds the client CA the operator keeps, with its key
// (GeneratesClientPKI). No pod mounts it: clients get its certificate as
// ca.crt of the credentials Secret.
func (c *NatsCluster) ClientCASecretName() string { return c.Name + "-client-ca" }

// GeneratesRoutePKI reports whether the operator keeps the route CA and
// signs the route certificate itself: route TLS on and no Secret of the
// user's named. spec.tls.routes.issuerRef changes nothing here: the route
// CA is always the operator's own, never one an issuer signs (an issuer
// the tenant names would hand it a sub-CA of the issuer's CA).
//
// Why a CA per cluster: nats-server checks no names on a route it
// accepts, only that the peer's certificate chains to ca_file. Were an
// issuer to sign the route certificates, ca_file would be the issuer's
// CA, and every cluster on that issuer (another tenant's, in another
// namespace) would hold a certificate the servers accept. Under a
// cluster's own CA, trusted alone, only that cluster's certificate is.
func (c *NatsCluster) GeneratesRoutePKI() bool {
	return c.Spec.RouteTLSEnabled() && c.Spec.TLS.Routes.SecretName == ""
}

// IgnoresRouteIssuer reports whether c still names a route issuer, which
// the operator no longer asks for anything: the controller says so.
func (c *NatsCluster) IgnoresRouteIssuer() bool {
	return c.Spec.RouteTLSEnabled() && c.Spec.TLS.Routes.IssuerRef != nil
}
