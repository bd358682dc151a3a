package v1alpha1

// GatewayName is this cluster's name in the supercluster, and the route
// cluster's name: nats-server requires the two to agree.
func (c *NatsCluster) GatewayName() string {
	if g := c.Spec.Gateway; g != nil && g.Name != "" {
		return g.Name
	}
	return c.Name
}

// GatewaysSecretName holds the other members' URLs with the gateway
// credentials, one key per member.
func (c *NatsCluster) GatewaysSecretName() string { return c.Name + "-gateways" }

// GatewayTLSSecretName holds the gateway certificate.
func (c *NatsCluster) GatewayTLSSecretName() string {
	if g := c.Spec.Gateway; g != nil && g.TLS.SecretName != "" {
		return g.TLS.SecretName
	}
	return c.Name + "-gateway-tls"
}

// GatewayCertificateName is the gateway's Certificate (issuerRef).
func (c *NatsCluster) GatewayCertificateName() string { return c.Name + "-gateway" }

// GatewayUserSecrets are the user Secrets spec.gateway names.
func (c *NatsCluster) GatewayUserSecrets() []string {
	g := c.Spec.Gateway
	if g == nil {
		return nil
	}
	out := []string{g.SecretRef.Name}
	if g.TLS.SecretName != "" && g.TLS.SecretName != g.SecretRef.Name {
		out = append(out, g.TLS.SecretName)
	}
	return out
}
