package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
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
	LeafnodeUserDefault = v1alpha1.LeafnodeUserDefault
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

// remoteAccount is the local account a remote binds to.
func remoteAccount(c *v1alpha1.NatsCluster, r v1alpha1.LeafnodeRemote) string {
	if r.Account != "" || !c.HasUsersFile() {
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
		if _, ok := c.LeafnodeAuthRef(); ok {
			out.Authorization = &natsconf.LeafAuthorization{
				User: natsconf.String(c.LeafnodeUser()), Password: natsconf.Env(EnvLeafnodePassword), Account: c.LeafnodeAccount(),
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
	if !c.HasLeafnodesFile() {
		return nil
	}
	return []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: c.LeafnodesSecretName()},
	}}}
}
