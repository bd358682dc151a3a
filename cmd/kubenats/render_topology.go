package main

import (
	"fmt"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// certificateSecret describes a certificate's Secret: yours, or made by
// cert-manager from a Certificate render prints.
func certificateSecret(secret, what, certificate string, issued bool) string {
	if issued {
		return fmt.Sprintf("Secret %s, keys tls.crt, tls.key, ca.crt: %s, which cert-manager issues from Certificate %s (printed below)", secret, what, certificate)
	}
	return fmt.Sprintf("Secret %s, keys tls.crt, tls.key, ca.crt: %s", secret, what)
}

// topologySecrets describes the Secrets the leafnodes and the gateway
// read. Without the operator, the ones it writes (the leafnode password,
// leafnodes.conf with the remotes' files, the gateway URLs) are yours too.
func topologySecrets(c *v1alpha1.NatsCluster) []string {
	var out []string
	if ref, ok := c.LeafnodeAuthRef(); ok {
		out = append(out, fmt.Sprintf("Secret %s, key %s: the password accepted leafnodes present as user %s", ref.Name, ref.Key, c.LeafnodeUser()))
	}
	if c.HasLeafnodesFile() {
		var from []string
		for _, r := range c.Spec.Leafnodes.Remotes {
			for _, ref := range []*v1alpha1.LocalSecretRef{r.UserSecretRef, r.CredsSecretRef, r.TLS} {
				if ref != nil {
					from = append(from, ref.Name)
				}
			}
		}
		what := fmt.Sprintf("Secret %s, key %s and the remotes' files: the leafnode remotes", c.LeafnodesSecretName(), render.LeafnodesConfKey)
		if len(from) > 0 {
			what += ", which the operator writes from Secrets " + strings.Join(from, ", ")
		}
		out = append(out, what)
	}
	if c.Spec.LeafnodesAccepted() {
		if t := c.Spec.Leafnodes.Accept.TLS; t != nil {
			out = append(out, certificateSecret(c.LeafnodesTLSSecretName(), "the leafnode listener's certificate", c.LeafnodesCertificateName(), t.IssuerRef != nil))
		}
	}
	if g := c.Spec.Gateway; g != nil {
		keys := make([]string, len(g.Gateways))
		for i, gw := range g.Gateways {
			keys[i] = fmt.Sprintf("urls-%d (%s)", i, gw.Name)
		}
		out = append(out,
			fmt.Sprintf("Secret %s, keys %s and %s: the supercluster's gateway user and password", g.SecretRef.Name, render.GatewayUserKey, render.PasswordKey),
			fmt.Sprintf("Secret %s, keys %s: each gateway's URLs with that user and password, as a nats.conf array", c.GatewaysSecretName(), strings.Join(keys, ", ")),
			certificateSecret(c.GatewayTLSSecretName(), "the gateway certificate (server and client)", c.GatewayCertificateName(), g.TLS.IssuerRef != nil))
	}
	return out
}
