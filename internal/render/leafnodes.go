package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// LeafnodePort is the leafnode listener (the official chart's number).
const LeafnodePort = 7422

// The leafnode listener's names and files.
const (
	LeafnodePortName = "leafnodes"
	// LeafnodeUserDefault is the user accepted leafnodes present (mode users).
	LeafnodeUserDefault = "leaf"
	// EnvLeafnodePassword is the accepted leafnodes' password. From the
	// environment: nats-server cannot reload leafnode authorization, so a
	// change of it restarts the servers anyway (Inputs.CredentialsHash).
	EnvLeafnodePassword = "NATS_LEAFNODE_PASSWORD"
	LeafnodesTLSDir     = TLSDir + "/leafnodes"
	leafnodesTLSVolume  = "leafnodes-tls"
)

// The remotes' file: the operator's Secret <name>-leafnodes holds
// leafnodes.conf (the URLs of remotes that authenticate with a password,
// as variables) and each remote's creds and certificates, copied from the
// user's opted-in Secrets. It is projected beside nats.conf, so a remote
// added, changed or removed reaches the servers by reload, and its
// revision (MetadataLeafnodesKey) says which copy a server loaded.
const (
	LeafnodesConfKey     = "leafnodes.conf"
	EnvLeafnodesRevision = "KUBENATS_LEAFNODES_REVISION"
	MetadataLeafnodesKey = "kubenats.io/leafnodes"
)

// LeafnodesSecretName holds leafnodes.conf and the remotes' files.
func LeafnodesSecretName(c *v1alpha1.NatsCluster) string { return c.Name + "-leafnodes" }

// LeafnodeAuthSecretName holds the generated leafnode password.
func LeafnodeAuthSecretName(c *v1alpha1.NatsCluster) string { return c.Name + "-leafnodes-auth" }

// LeafnodesTLSSecretName holds the leafnode listener's certificate.
func LeafnodesTLSSecretName(c *v1alpha1.NatsCluster) string {
	if a := c.Spec.Leafnodes; a != nil && a.Accept != nil && a.Accept.TLS != nil && a.Accept.TLS.SecretName != "" {
		return a.Accept.TLS.SecretName
	}
	return c.Name + "-leafnodes-tls"
}

// LeafnodesCertificateName is the Certificate of the leafnode listener.
func LeafnodesCertificateName(c *v1alpha1.NatsCluster) string { return c.Name + "-leafnodes" }

// HasLeafnodesFile reports whether the pods mount <name>-leafnodes: as soon
// as spec.leafnodes is set, so that remotes come and go by reload.
func HasLeafnodesFile(c *v1alpha1.NatsCluster) bool { return c.Spec.Leafnodes != nil }

// LeafnodeAuthRef is where the accepted leafnodes' password lives (mode
// users): the user's Secret or <name>-leafnodes-auth. ok is false when
// leafnodes are not accepted by password.
func LeafnodeAuthRef(c *v1alpha1.NatsCluster) (ref v1alpha1.SecretKeyRef, ok bool) {
	if !c.Spec.LeafnodesAccepted() || !HasUsersFile(c) {
		return v1alpha1.SecretKeyRef{}, false
	}
	if r := c.Spec.Leafnodes.Accept.SecretRef; r != nil {
		out := *r
		if out.Key == "" {
			out.Key = PasswordKey
		}
		return out, true
	}
	return v1alpha1.SecretKeyRef{Name: LeafnodeAuthSecretName(c), Key: PasswordKey}, true
}

// LeafnodeUser is the name accepted leafnodes present.
func LeafnodeUser(c *v1alpha1.NatsCluster) string {
	if c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.User != "" {
		return c.Spec.Leafnodes.Accept.User
	}
	return LeafnodeUserDefault
}

// LeafnodeAccount is the account accepted leafnodes join (mode users).
func LeafnodeAccount(c *v1alpha1.NatsCluster) string {
	if c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.Account != "" {
		return c.Spec.Leafnodes.Accept.Account
	}
	return AppAccount
}

// remoteAccount is the local account a remote binds to.
func remoteAccount(c *v1alpha1.NatsCluster, r v1alpha1.LeafnodeRemote) string {
	if r.Account != "" || !HasUsersFile(c) {
		return r.Account
	}
	return AppAccount
}

// Files of one remote inside the config directory.
func remoteCredsFile(r v1alpha1.LeafnodeRemote) string { return "leaf-" + r.Name + ".creds" }
func remoteCAFile(r v1alpha1.LeafnodeRemote) string    { return "leaf-" + r.Name + "-ca.crt" }

// remoteURLVar is the leafnodes.conf variable of a remote's j-th URL with
// its credentials. Remote names are DNS labels: upper-cased, with '_'
// for '-', they make valid and distinct variable names.
func remoteURLVar(r v1alpha1.LeafnodeRemote, j int) string {
	return fmt.Sprintf("KUBENATS_LEAF_%s_URL_%d", strings.ToUpper(strings.ReplaceAll(r.Name, "-", "_")), j)
}

// leafnodesBlock is the leafnodes block of nats.conf, nil without
// spec.leafnodes. Nothing secret is in it: passwords are the environment's
// (accepted side) or leafnodes.conf's (remotes).
func leafnodesBlock(c *v1alpha1.NatsCluster) *natsconf.Leafnodes {
	spec := c.Spec.Leafnodes
	if spec == nil {
		return nil
	}
	out := &natsconf.Leafnodes{}
	if a := spec.Accept; a != nil {
		out.Port = LeafnodePort
		if _, ok := LeafnodeAuthRef(c); ok {
			out.Authorization = &natsconf.LeafAuthorization{
				User: natsconf.String(LeafnodeUser(c)), Password: natsconf.Env(EnvLeafnodePassword), Account: LeafnodeAccount(c),
			}
		}
		if t := a.TLS; t != nil {
			out.TLS = &natsconf.TLS{
				CertFile: LeafnodesTLSDir + "/" + TLSCertKey, KeyFile: LeafnodesTLSDir + "/" + TLSKeyKey,
				CAFile: LeafnodesTLSDir + "/" + TLSCAKey, Verify: t.Verify, HandshakeFirst: t.HandshakeFirst,
			}
		}
	}
	for _, r := range spec.Remotes {
		remote := natsconf.LeafRemote{Account: remoteAccount(c, r), DenyImports: r.DenyImports, DenyExports: r.DenyExports}
		for j, u := range r.URLs {
			if r.UserSecretRef != nil {
				remote.URLs = append(remote.URLs, natsconf.Env(remoteURLVar(r, j)))
			} else {
				remote.URLs = append(remote.URLs, natsconf.String(u))
			}
		}
		if r.CredsSecretRef != nil {
			remote.Credentials = ConfigDir + "/" + remoteCredsFile(r)
		}
		if r.TLS != nil {
			remote.TLS = &natsconf.TLS{CAFile: ConfigDir + "/" + remoteCAFile(r)}
		}
		out.Remotes = append(out.Remotes, remote)
	}
	return out
}

// RemoteSecrets are what the user's Secrets of one remote hold, read by the
// controller (only opted-in Secrets). Version names them without their
// values: the Secrets' UIDs and resource versions.
type RemoteSecrets struct {
	Creds          string
	User, Password string
	CA             string
	Version        string
}

// LeafnodesFiles is the data of <name>-leafnodes for the given remotes'
// Secrets (by remote name), and its revision: a hash of the spec's remotes
// and the Secrets' versions, never of their values (a user's password may
// be weak, and the revision is shown in /varz).
func LeafnodesFiles(c *v1alpha1.NatsCluster, remotes map[string]RemoteSecrets) (data map[string]string, revision string, _ error) {
	data = map[string]string{}
	vars := natsconf.Variables{}
	sum := sha256.New()
	for _, r := range c.Spec.LeafnodeRemotes() {
		s := remotes[r.Name]
		fmt.Fprintf(sum, "%s\x00%q\x00%s\x00", r.Name, r.URLs, s.Version)
		if r.UserSecretRef != nil {
			for j, raw := range r.URLs {
				u, err := url.Parse(raw)
				if err != nil {
					return nil, "", fmt.Errorf("spec.leafnodes.remotes[%s].urls[%d]: %w", r.Name, j, err)
				}
				u.User = url.UserPassword(s.User, s.Password)
				vars[remoteURLVar(r, j)] = u.String()
			}
		}
		if r.CredsSecretRef != nil {
			data[remoteCredsFile(r)] = s.Creds
		}
		if r.TLS != nil {
			data[remoteCAFile(r)] = s.CA
		}
	}
	revision = hex.EncodeToString(sum.Sum(nil)[:8])
	vars[EnvLeafnodesRevision] = revision
	text, err := vars.Render()
	if err != nil {
		return nil, "", err
	}
	data[LeafnodesConfKey] = string(text)
	return data, revision, nil
}

// leafnodesProjection projects <name>-leafnodes, every key, into the
// config directory.
func leafnodesProjection(c *v1alpha1.NatsCluster) []corev1.VolumeProjection {
	if !HasLeafnodesFile(c) {
		return nil
	}
	return []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: LeafnodesSecretName(c)},
	}}}
}

// LeafnodeUserSecrets are the user Secrets spec.leafnodes names, sorted.
func LeafnodeUserSecrets(c *v1alpha1.NatsCluster) []string {
	seen := map[string]bool{}
	if ref, ok := LeafnodeAuthRef(c); ok && c.Spec.Leafnodes.Accept.SecretRef != nil {
		seen[ref.Name] = true
	}
	if a := c.Spec.Leafnodes; a != nil && a.Accept != nil && a.Accept.TLS != nil && a.Accept.TLS.SecretName != "" {
		seen[a.Accept.TLS.SecretName] = true
	}
	for _, r := range c.Spec.LeafnodeRemotes() {
		for _, ref := range []*v1alpha1.LocalSecretRef{r.CredsSecretRef, r.UserSecretRef, r.TLS} {
			if ref != nil {
				seen[ref.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
