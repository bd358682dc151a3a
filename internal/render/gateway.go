package render

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// GatewayPort is the gateway listener (the official chart's number).
const GatewayPort = 7222

// The gateway listener's names, files and variables. Everything about a
// gateway is read at start (nats-server reloads none of it but the
// certificate files), so the credentials come from the environment and a
// change of them restarts the servers (Inputs.CredentialsHash).
const (
	GatewayPortName     = "gateway"
	GatewayTLSDir       = TLSDir + "/gateway"
	gatewayTLSVolume    = "gateway-tls"
	EnvGatewayUser      = "NATS_GATEWAY_USER"
	EnvGatewayPassword  = "NATS_GATEWAY_PASSWORD"
	EnvGatewayAdvertise = "NATS_GATEWAY_ADVERTISE"
	// GatewayUserKey and PasswordKey are the keys of the user's gateway
	// Secret.
	GatewayUserKey = "user"
)

// gatewayTLSHandshakeTimeout: as for routes, a busy node should not cost a
// retry.
const gatewayTLSHandshakeTimeout = 5e9 // 5 s

// gatewayURLsKey is the gateways Secret's key, and gatewayURLsEnv the
// variable, of the i-th member. The _URLS suffix tells the config check
// that the variable holds an array.
func gatewayURLsKey(i int) string { return "urls-" + strconv.Itoa(i) }
func gatewayURLsEnv(i int) string { return "NATS_GATEWAY_" + strconv.Itoa(i) + "_URLS" }

// gatewayBlock is the gateway block, nil without spec.gateway.
func gatewayBlock(c *v1alpha1.NatsCluster) *natsconf.Gateway {
	g := c.Spec.Gateway
	if g == nil {
		return nil
	}
	out := &natsconf.Gateway{
		Name: c.GatewayName(), Port: GatewayPort,
		// Gossip hands the other members this server's DNS name, which
		// its certificate carries, not its IP address, which it does not.
		Advertise:     natsconf.Env(EnvGatewayAdvertise),
		Authorization: &natsconf.RouteAuthorization{User: natsconf.Env(EnvGatewayUser), Password: natsconf.Env(EnvGatewayPassword)},
		TLS: &natsconf.TLS{
			CertFile: GatewayTLSDir + "/" + TLSCertKey, KeyFile: GatewayTLSDir + "/" + TLSKeyKey,
			CAFile: GatewayTLSDir + "/" + TLSCAKey, Verify: true, Timeout: gatewayTLSHandshakeTimeout,
		},
	}
	for i, r := range g.Gateways {
		out.Gateways = append(out.Gateways, natsconf.GatewayRemote{Name: r.Name, URLs: natsconf.Env(gatewayURLsEnv(i))})
	}
	return out
}

// GatewayMemberURLs are a member's gateway URLs without credentials: its
// own, or one per server of the NatsCluster it references, by the names
// its headless Service gives them (which its certificate carries).
func GatewayMemberURLs(c *v1alpha1.NatsCluster, r v1alpha1.GatewayRemote) []string {
	if r.ClusterRef == nil {
		return r.URLs
	}
	ns := r.ClusterRef.Namespace
	if ns == "" {
		ns = c.Namespace
	}
	n := max(int(r.ClusterRef.Replicas), 1)
	ref := &v1alpha1.NatsCluster{}
	ref.Name, ref.Namespace = r.ClusterRef.Name, ns
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("nats://%s.%s.%s.svc:%d", ref.PodName(i), ref.HeadlessServiceName(), ns, GatewayPort)
	}
	return out
}

// GatewaysData is the gateways Secret's data: each member's URLs with the
// gateway credentials, as a nats.conf array.
func GatewaysData(c *v1alpha1.NatsCluster, user, password string) (map[string]string, error) {
	g := c.Spec.Gateway
	if g == nil {
		return nil, nil
	}
	data := map[string]string{}
	for i, r := range g.Gateways {
		var quoted []string
		for _, raw := range GatewayMemberURLs(c, r) {
			u, err := url.Parse(raw)
			if err != nil {
				return nil, fmt.Errorf("spec.gateway.gateways[%s]: %w", r.Name, err)
			}
			u.User = url.UserPassword(user, password)
			quoted = append(quoted, strconv.Quote(u.String()))
		}
		data[gatewayURLsKey(i)] = "[" + strings.Join(quoted, ", ") + "]"
	}
	return data, nil
}

// gatewayAdvertise is EnvGatewayAdvertise's value: this server's fully
// qualified name (members in other namespaces dial it), quoted so that
// nats-server reads a string (the kubelet expands $(POD_NAME)).
func gatewayAdvertise(c *v1alpha1.NatsCluster) string {
	return fmt.Sprintf(`"$(%s).%s.%s.svc:%d"`, EnvPodName, c.HeadlessServiceName(), c.Namespace, GatewayPort)
}
