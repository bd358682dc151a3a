package natscluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// credentials reads the values the generated Secrets hold, or makes them
// once; a value is never rotated silently, and a Secret deleted under
// running servers is not made anew without the user's word
// (missingGenerated). It also returns a hash that changes when the
// credentials the servers read from their environment at start change, so
// the servers restart to pick them up: the route password, and the token.
// In mode users the passwords are in users.conf, which a reload rereads,
// so they are not hashed.
//
// read collects the generated Secrets read, by name (upToDate).
func (r *Reconciler) credentials(ctx context.Context, c *v1alpha1.NatsCluster, read map[string]*corev1.Secret) (render.Credentials, string, *status.Blocker, error) {
	var cred render.Credentials
	used, err := r.serversUse(ctx, c)
	if err != nil {
		return cred, "", nil, err
	}
	sum := sha256.New()
	if ref, ok := c.ClientSecretRef(); ok {
		var (
			value   string
			blocker *status.Blocker
			err     error
		)
		if c.GeneratesClientSecret() {
			value, blocker, err = r.generatedValue(ctx, c, ref, used, read)
			if !c.HasUsersFile() {
				sum.Write([]byte(value)) // random, so its hash tells nothing
			}
		} else {
			var version string
			value, version, blocker, err = r.userSecretValue(ctx, c, ref)
			// The user's own password may be weak: hash the Secret's
			// version, never its value.
			if !c.HasUsersFile() {
				sum.Write([]byte(version))
			}
		}
		if blocker != nil || err != nil {
			return cred, "", blocker, err
		}
		cred.Client = value
	}
	if c.HasTrust() {
		trust, blocker, err := r.trust(ctx, c, used, read)
		if blocker != nil || err != nil {
			return cred, "", blocker, err
		}
		cred.Trust = trust
	}
	if c.HasUsersFile() {
		value, blocker, err := r.generatedValue(ctx, c, v1alpha1.SecretKeyRef{Name: c.SystemSecretName(), Key: render.PasswordKey}, used, read)
		if blocker != nil || err != nil {
			return cred, "", blocker, err
		}
		cred.System = value
	}
	if c.HasRoutes() {
		value, blocker, err := r.generatedValue(ctx, c, v1alpha1.SecretKeyRef{Name: c.RouteSecretName(), Key: render.PasswordKey}, used, read)
		if blocker != nil || err != nil {
			return cred, "", blocker, err
		}
		cred.Route = value
		sum.Write([]byte(value))
	}
	topology, blocker, err := r.topologyCredentials(ctx, c, used, read, sum)
	if blocker != nil || err != nil {
		return cred, "", blocker, err
	}
	cred.Topology = topology
	if c.HasUsersFile() {
		if _, _, err := render.UsersConf(c, cred); err != nil {
			return cred, "", &status.Blocker{Reason: v1alpha1.ReasonSecretInvalid, Fatal: true, Message: "spec.auth.secretRef: " + err.Error()}, nil
		}
	}
	// Certificates are not hashed: renewed, they are reloaded, not restarted.
	return cred, hex.EncodeToString(sum.Sum(nil)[:8]), nil, nil
}

// generatedValue is the value in a Secret the operator made, or a new one
// for servers yet to start. A Secret of that name that c does not own is
// left alone here; applying it then reports the conflict.
func (r *Reconciler) generatedValue(ctx context.Context, c *v1alpha1.NatsCluster, ref v1alpha1.SecretKeyRef, used map[string]bool, read map[string]*corev1.Secret) (string, *status.Blocker, error) {
	s, foreign, err := r.lookupSecret(ctx, c, ref.Name)
	if s != nil {
		read[ref.Name] = s
	}
	switch {
	case err != nil:
		return "", nil, err
	case s != nil && len(s.Data[ref.Key]) > 0:
		return string(s.Data[ref.Key]), nil, nil
	case !foreign:
		if b := r.missingGenerated(c, ref.Name, used); b != nil {
			return "", b, nil
		}
	}
	v, err := newSecretValue()
	return v, nil, err
}

// ownedSecret is the Secret of that name the operator made for c, or nil.
func (r *Reconciler) ownedSecret(ctx context.Context, c *v1alpha1.NatsCluster, name string) (*corev1.Secret, error) {
	s, _, err := r.lookupSecret(ctx, c, name)
	return s, err
}

// lookupSecret is servers.LookupSecret, read past the cache.
func (r *Reconciler) lookupSecret(ctx context.Context, c *v1alpha1.NatsCluster, name string) (_ *corev1.Secret, foreign bool, _ error) {
	return servers.LookupSecret(ctx, r.APIReader, c, name)
}

// userSecretValue reads the user's Secret from the cache of opted-in
// Secrets: a Secret its owner did not label for kubenats is never used.
func (r *Reconciler) userSecretValue(ctx context.Context, c *v1alpha1.NatsCluster, ref v1alpha1.SecretKeyRef) (value, version string, _ *status.Blocker, _ error) {
	s, refusal, err := usersecrets.Get(ctx, r.UserSecrets, c.Namespace, ref.Name, "spec.auth.secretRef")
	if refusal != "" {
		return "", "", &status.Blocker{Reason: v1alpha1.ReasonSecretNotFound, Fatal: true, Message: refusal}, nil
	}
	if err != nil {
		return "", "", nil, err
	}
	value = string(s.Data[ref.Key])
	if msg := credentialProblem(value); msg != "" {
		return "", "", &status.Blocker{Reason: v1alpha1.ReasonSecretInvalid, Fatal: true,
			Message: fmt.Sprintf("key %q of Secret %q: %s", ref.Key, ref.Name, msg)}, nil
	}
	return value, string(s.UID) + "/" + s.ResourceVersion, nil, nil
}

// credentialProblem says why nats-server would misread a credential, or "".
// nats.conf reads it from an environment variable, whose value the server
// parses as config.
func credentialProblem(value string) string {
	if err := natsconf.CheckEnvString(value); err != nil {
		return err.Error()
	}
	return ""
}

// newSecretValue is 32 letters and digits, the first a letter: nats-server
// would read an all-digit (or hex-looking) value as a number.
func newSecretValue() (string, error) {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const alphabet = letters + "0123456789"
	out := make([]byte, 32)
	for i := range out {
		set := alphabet
		if i == 0 {
			set = letters
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
		if err != nil {
			return "", err
		}
		out[i] = set[n.Int64()]
	}
	return string(out), nil
}
