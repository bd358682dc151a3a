package natscluster

import (
	"context"
	"fmt"
	"hash"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// topologyCredentials reads what spec.leafnodes and spec.gateway name: the
// leafnode password (made once when the user names none), the remotes'
// Secrets and the gateway credentials, from opted-in Secrets only. What
// the servers read at start goes into sum, so that its change restarts
// them: the leafnode password and the gateway credentials (nats-server
// reloads neither), the remotes' Secrets only when nothing can reload the
// servers. User Secrets are hashed by version, never by value.
func (r *Reconciler) topologyCredentials(ctx context.Context, c *v1alpha1.NatsCluster, used map[string]bool, read map[string]*corev1.Secret, sum hash.Hash) (render.TopologyCredentials, *status.Blocker, error) {
	var out render.TopologyCredentials
	if ref, ok := c.LeafnodeAuthRef(); ok {
		var (
			value, version string
			blocker        *status.Blocker
			err            error
		)
		if c.Spec.Leafnodes.Accept.SecretRef == nil {
			value, blocker, err = r.generatedValue(ctx, c, ref, used, read)
			version = value // random: its hash tells nothing
		} else {
			value, version, blocker, err = r.userSecretField(ctx, c, ref.Name, ref.Key, "spec.leafnodes.accept.secretRef")
		}
		if blocker != nil || err != nil {
			return out, blocker, err
		}
		out.LeafnodePassword = value
		sum.Write([]byte("leafnodes\x00" + version))
	}
	if a := c.Spec.Leafnodes; a != nil && a.Accept != nil && a.Accept.TLS != nil && a.Accept.TLS.SecretName != "" {
		if b, err := r.mountableTLS(ctx, c, a.Accept.TLS.SecretName, "spec.leafnodes.accept.tls.secretName", true); b != nil || err != nil {
			return out, b, err
		}
	}
	remotes, blocker, err := r.remoteSecrets(ctx, c)
	if blocker != nil || err != nil {
		return out, blocker, err
	}
	out.Remotes = remotes
	if !c.HasSystemUser() {
		// Its revision covers the spec's remotes and the Secrets' versions.
		_, revision, _ := render.LeafnodesFiles(c, remotes)
		sum.Write([]byte("remotes\x00" + revision))
	}
	if g := c.Spec.Gateway; g != nil {
		field := "spec.gateway.secretRef"
		user, userVersion, b, err := r.userSecretField(ctx, c, g.SecretRef.Name, render.GatewayUserKey, field)
		if b != nil || err != nil {
			return out, b, err
		}
		password, _, b, err := r.userSecretField(ctx, c, g.SecretRef.Name, render.PasswordKey, field)
		if b != nil || err != nil {
			return out, b, err
		}
		out.GatewayUser, out.GatewayPassword = user, password
		fmt.Fprintf(sum, "gateway\x00%s", userVersion)
		for _, m := range g.Gateways {
			fmt.Fprintf(sum, "\x00%s=%s", m.Name, strings.Join(render.GatewayMemberURLs(c, m), ","))
		}
		if g.TLS.SecretName != "" {
			if b, err := r.mountableTLS(ctx, c, g.TLS.SecretName, "spec.gateway.tls.secretName", true); b != nil || err != nil {
				return out, b, err
			}
		}
	}
	return out, nil, nil
}

// remoteSecrets reads each remote's Secrets. A Secret that is missing,
// not opted in, or lacks its keys stops the pass with a condition that
// names the field, never a value.
func (r *Reconciler) remoteSecrets(ctx context.Context, c *v1alpha1.NatsCluster) (map[string]render.RemoteSecrets, *status.Blocker, error) {
	out := map[string]render.RemoteSecrets{}
	for _, remote := range c.Spec.LeafnodeRemotes() {
		var rs render.RemoteSecrets
		var versions []string
		at := fmt.Sprintf("spec.leafnodes.remotes[%s]", remote.Name)
		if ref := remote.CredsSecretRef; ref != nil {
			v, version, b, err := r.userSecretField(ctx, c, ref.Name, "creds", at+".credsSecretRef")
			if b != nil || err != nil {
				return nil, b, err
			}
			rs.Creds, versions = v, append(versions, version)
		}
		if ref := remote.UserSecretRef; ref != nil {
			user, version, b, err := r.userSecretField(ctx, c, ref.Name, "user", at+".userSecretRef")
			if b != nil || err != nil {
				return nil, b, err
			}
			password, _, b, err := r.userSecretField(ctx, c, ref.Name, "password", at+".userSecretRef")
			if b != nil || err != nil {
				return nil, b, err
			}
			rs.User, rs.Password, versions = user, password, append(versions, version)
		}
		if ref := remote.TLS; ref != nil {
			ca, version, b, err := r.userSecretField(ctx, c, ref.Name, render.TLSCAKey, at+".tls")
			if b != nil || err != nil {
				return nil, b, err
			}
			rs.CA, versions = ca, append(versions, version)
		}
		rs.Version = strings.Join(versions, ",")
		out[remote.Name] = rs
	}
	if _, _, err := render.LeafnodesFiles(c, out); err != nil {
		return nil, &status.Blocker{Reason: v1alpha1.ReasonSecretInvalid, Fatal: true, Message: "spec.leafnodes.remotes: " + err.Error()}, nil
	}
	return out, nil, nil
}

// userSecretField is one key of a user's opted-in Secret, and the
// Secret's version. An empty key, or a value nats-server would misread,
// is refused.
func (r *Reconciler) userSecretField(ctx context.Context, c *v1alpha1.NatsCluster, name, key, field string) (value, version string, _ *status.Blocker, _ error) {
	s, refusal, err := usersecrets.Get(ctx, r.UserSecrets, c.Namespace, name, field)
	if refusal != "" {
		return "", "", &status.Blocker{Reason: v1alpha1.ReasonSecretNotFound, Fatal: true, Message: refusal}, nil
	}
	if err != nil {
		return "", "", nil, err
	}
	value = string(s.Data[key])
	var msg string
	switch {
	case value == "":
		msg = "it is missing or empty"
	case !isFileKey(key):
		// Read from the environment or a variable, lexed as config.
		msg = credentialProblem(value)
	}
	if msg != "" {
		return "", "", &status.Blocker{Reason: v1alpha1.ReasonSecretInvalid, Fatal: true,
			Message: fmt.Sprintf("%s: key %q of Secret %q: %s", field, key, name, msg)}, nil
	}
	return value, string(s.UID) + "/" + s.ResourceVersion, nil, nil
}

// isFileKey: creds and certificates reach the servers as files, never
// lexed as config.
func isFileKey(key string) bool {
	return key == "creds" || key == render.TLSCertKey || key == render.TLSKeyKey || key == render.TLSCAKey
}

// mountableTLS refuses a certificate Secret the pods would mount unless
// its owner opted it in and it holds tls.crt, tls.key and ca.crt.
func (r *Reconciler) mountableTLS(ctx context.Context, c *v1alpha1.NatsCluster, name, field string, needCA bool) (*status.Blocker, error) {
	keys := []string{render.TLSCertKey, render.TLSKeyKey}
	if needCA {
		keys = append(keys, render.TLSCAKey)
	}
	for _, k := range keys {
		_, _, b, err := r.userSecretField(ctx, c, name, k, field)
		if b != nil || err != nil {
			return b, err
		}
	}
	return nil, nil
}

// topologyCertificates are the leafnode listener's and the gateway's
// certificates, observed as the client's: their expiry is a reload mark
// (the servers report it in /varz), so a renewed one is reloaded.
func topologyCertificates(c *v1alpha1.NatsCluster) []status.Certificate {
	var out []status.Certificate
	if c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.TLS != nil {
		out = append(out, status.Certificate{Listener: "leafnodes", Secret: c.LeafnodesTLSSecretName()})
	}
	if c.Spec.GatewayEnabled() {
		out = append(out, status.Certificate{Listener: "gateway", Secret: c.GatewayTLSSecretName()})
	}
	return out
}

// topologyIssued reports whether cert-manager issues the leafnode or
// gateway certificate; ok is false for other listeners.
func topologyIssued(c *v1alpha1.NatsCluster, listener string) (issued, ok bool) {
	switch listener {
	case "leafnodes":
		return c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.TLS != nil && c.Spec.Leafnodes.Accept.TLS.IssuerRef != nil, true
	case "gateway":
		return c.Spec.GatewayEnabled() && c.Spec.Gateway.TLS.IssuerRef != nil, true
	}
	return false, false
}
