package v1alpha1

// ClientServiceName is the client Service, also the internal endpoint's host.
func (c *NatsCluster) ClientServiceName() string { return c.Name }

// HeadlessServiceName is the Service that gives each server a stable DNS name.
func (c *NatsCluster) HeadlessServiceName() string { return c.Name + "-headless" }

// ConfigMapName holds nats.conf.
func (c *NatsCluster) ConfigMapName() string { return c.Name + "-config" }

// StatefulSetName runs the servers; pods are <name>-0, <name>-1, ...
func (c *NatsCluster) StatefulSetName() string { return c.Name }

// PodDisruptionBudgetName keeps all but one server up through voluntary
// disruptions.
func (c *NatsCluster) PodDisruptionBudgetName() string { return c.Name }

// AuthSecretName holds the generated client password or token.
func (c *NatsCluster) AuthSecretName() string { return c.Name + "-auth" }

// SystemSecretName holds the password of the operator's own system user.
func (c *NatsCluster) SystemSecretName() string { return c.Name + "-system" }

// WebSocketIngressName is the Ingress in front of the WebSocket port.
func (c *NatsCluster) WebSocketIngressName() string { return c.Name + "-websocket" }

// CredentialsSecretName holds a ready-to-use client URL and its parts.
func (c *NatsCluster) CredentialsSecretName() string { return c.Name + "-client" }

// ClientCertificateName is the client listener's Certificate.
func (c *NatsCluster) ClientCertificateName() string { return c.Name + "-client" }

// LegacyRouteCertificateNames are the Certificates earlier releases asked
// a route issuer for: the route certificate itself (<name>-routes), then
// the cluster's route CA (<name>-routes-ca, isCA). Neither is rendered
// any more; the controller deletes the ones the cluster controls, or
// cert-manager would keep renewing them. The route CA is the operator's
// own (GeneratesRoutePKI): an issuer a tenant names is never asked for a
// CA, which would be a sub-CA of the issuer's own CA in the tenant's
// hands.
func (c *NatsCluster) LegacyRouteCertificateNames() []string {
	return []string{c.Name + "-routes", c.LegacyRouteCASecretName()}
}

// LegacyRouteCASecretName held the route CA cert-manager issued for c
// (the Certificate's secretName was its own name). The controller reads
// it only to carry a cluster's routes over to the operator's own CA
// without cutting them (routeCAMove); it never deletes it: the Secret is
// the user's to remove.
func (c *NatsCluster) LegacyRouteCASecretName() string { return c.Name + "-routes-ca" }

// PeerAuthenticationName is the policy of c's servers.
func (c *NatsCluster) PeerAuthenticationName() string { return c.Name }

// PodMonitorName and PrometheusRuleName are named after the cluster.
func (c *NatsCluster) PodMonitorName() string { return c.Name }

func (c *NatsCluster) PrometheusRuleName() string { return c.Name }

// MonitoringPortsPolicyName is the monitoring ports' policy of c. It is
// not the full policy's name: turning the full one on or off applies the
// new policy first and then removes the old (internal/natscluster/children_prune.go), and
// while both are there the ports are open as under the looser one.
func (c *NatsCluster) MonitoringPortsPolicyName() string { return c.Name + "-monitoring-ports" }

// NetworkPolicyName is the NetworkPolicy of c's servers.
func (c *NatsCluster) NetworkPolicyName() string { return c.Name }

// TrustSecretName holds the NATS operator's keys and JWTs (mode jwt).
func (c *NatsCluster) TrustSecretName() string { return c.Name + "-operator" }

// UsersSecretName holds users.conf.
func (c *NatsCluster) UsersSecretName() string { return c.Name + "-users" }

// RouteSecretName holds the route password and the route URLs with it.
func (c *NatsCluster) RouteSecretName() string { return c.Name + "-routes" }
