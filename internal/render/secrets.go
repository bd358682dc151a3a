package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
)

// Keys of the Secrets the operator generates.
const (
	PasswordKey = v1alpha1.PasswordKey
	TokenKey    = v1alpha1.TokenKey
)

// Keys of the credentials Secret that status.credentialsSecretRef names.
const (
	CredentialsURLKey      = "url"      // nats://user:password@host:4222, ready to use
	CredentialsServersKey  = "servers"  // nats://host:4222, without credentials
	CredentialsUserKey     = "user"     // mode users
	CredentialsPasswordKey = "password" // mode users
	CredentialsTokenKey    = "token"    // mode token
)

// Secret is a Secret the operator writes, with its values.
func Secret(c *v1alpha1.NatsCluster, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   typeMeta("v1", "Secret"),
		ObjectMeta: objectMeta(c, name),
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	}
}

// Credentials are the values the generated Secrets carry. The controller
// reads them from existing Secrets, or makes them once.
type Credentials struct {
	// Client is the client password (mode users) or token (mode token).
	Client string
	// System is the system user's password (mode users).
	System string
	// Route is the route password (clusters of two servers and more).
	Route string
	// RoutePKI is the route CA the operator keeps and the certificate it
	// signs with it (GeneratesRoutePKI); nil otherwise.
	RoutePKI *RoutePKI
	// ClientPKI is the client CA the operator keeps and the certificate it
	// signed (GeneratesClientPKI); nil otherwise.
	ClientPKI *ClientPKI
	// ClientCA is ca.crt of the client certificate, handed to clients in
	// the credentials Secret.
	ClientCA string
	// Trust are the trust Secret's values (mode jwt).
	Trust map[string]string
	// Topology are the leafnode and gateway credentials (topology.go).
	Topology TopologyCredentials
}

// RoutePKI is a generated CA and the route certificate it signed, PEM.
type RoutePKI struct {
	CACert, CAKey, Cert, Key string
	// Trust is ca.crt: CACert alone (when empty), or with the CA it
	// replaces while the servers move over (pki.PlanRouteTrust).
	Trust string
	// Signer is the CA that signed Cert, with its key: the route Secret
	// keeps it (never mounted) so that a replaced CA can still sign the
	// certificates of the overlap.
	Signer pki.KeyPair
}

// ClientPKI is the client CA the operator keeps and the client certificate
// it signed, PEM.
type ClientPKI struct {
	CA, Cert pki.KeyPair
}

// Keys of the route TLS Secret that the pods never mount: the CA that
// signed its certificate.
const (
	RouteSignerCertKey = "signer.crt"
	RouteSignerKeyKey  = "signer.key"
)

// RouteURLsKey is the routes Secret's key with the route URLs.
const RouteURLsKey = "urls"

// Secrets are the Secrets c needs with the given values: <name>-auth when
// the operator generates the client credential, <name>-system for its own
// user, <name>-users with the passwords the servers read (mode users),
// and <name>-client with a ready-to-use URL.
func Secrets(c *v1alpha1.NatsCluster, cred Credentials) []*corev1.Secret {
	var out []*corev1.Secret
	if c.GeneratesClientSecret() {
		ref, _ := c.ClientSecretRef()
		out = append(out, Secret(c, ref.Name, map[string]string{ref.Key: cred.Client}))
	}
	if c.HasUsersFile() {
		out = append(out, Secret(c, c.SystemSecretName(), map[string]string{PasswordKey: cred.System}))
	}
	if c.HasTrust() && len(cred.Trust) > 0 {
		out = append(out, Secret(c, c.TrustSecretName(), cred.Trust))
	}
	if c.HasUsersFile() {
		// A value UsersConf cannot write never gets here: the controller
		// refuses it first (and `kubenats render` prints no Secret).
		if text, _, err := UsersConf(c, cred); err == nil {
			out = append(out, Secret(c, c.UsersSecretName(), map[string]string{UsersConfKey: text}))
		}
	}
	if c.HasRoutes() {
		out = append(out, Secret(c, c.RouteSecretName(), map[string]string{
			PasswordKey: cred.Route, RouteURLsKey: RouteURLs(c, cred.Route),
		}))
	}
	if p := cred.RoutePKI; p != nil && c.GeneratesRoutePKI() {
		out = append(out, Secret(c, c.CASecretName(), map[string]string{TLSCertKey: p.CACert, TLSKeyKey: p.CAKey}))
		// ca.crt is the cluster's CA, never the chain above it: the
		// servers accept exactly the peers of this cluster (and, while a
		// replaced CA is phased out, those of the CA before it).
		trust := p.Trust
		if trust == "" {
			trust = p.CACert
		}
		data := map[string]string{TLSCertKey: p.Cert, TLSKeyKey: p.Key, TLSCAKey: trust}
		if p.Signer.Cert != "" && p.Signer.Key != "" {
			data[RouteSignerCertKey], data[RouteSignerKeyKey] = p.Signer.Cert, p.Signer.Key
		}
		out = append(out, Secret(c, c.RouteTLSSecretName(), data))
	}
	if p := cred.ClientPKI; p != nil && c.Spec.GeneratesClientPKI() {
		out = append(out,
			Secret(c, c.ClientCASecretName(), map[string]string{TLSCertKey: p.CA.Cert, TLSKeyKey: p.CA.Key}),
			Secret(c, c.ClientTLSSecretName(), map[string]string{TLSCertKey: p.Cert.Cert, TLSKeyKey: p.Cert.Key, TLSCAKey: p.CA.Cert}))
	}
	out = append(out, topologySecrets(c, cred.Topology)...)
	return append(out, Secret(c, c.CredentialsSecretName(), clientCredentials(c, cred)))
}

func clientCredentials(c *v1alpha1.NatsCluster, cred Credentials) map[string]string {
	servers := InternalURL(c)
	data := map[string]string{CredentialsServersKey: servers, CredentialsURLKey: servers}
	if cred.ClientCA != "" {
		data[TLSCAKey] = cred.ClientCA
	}
	switch c.Spec.Auth.Mode {
	case v1alpha1.AuthNone, v1alpha1.AuthJWT: // a NatsUser's Secret carries its creds
	case v1alpha1.AuthToken:
		data[CredentialsTokenKey] = cred.Client
		data[CredentialsURLKey] = urlWithUserinfo(c, cred.Client, "")
	default:
		data[CredentialsUserKey] = c.Spec.Auth.AppUser()
		data[CredentialsPasswordKey] = cred.Client
		data[CredentialsURLKey] = urlWithUserinfo(c, c.Spec.Auth.AppUser(), cred.Client)
	}
	return data
}
