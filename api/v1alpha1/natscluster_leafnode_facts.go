package v1alpha1

import "sort"

// LeafnodesSecretName holds leafnodes.conf and the remotes' files.
func (c *NatsCluster) LeafnodesSecretName() string { return c.Name + "-leafnodes" }

// LeafnodeAuthSecretName holds the generated leafnode password.
func (c *NatsCluster) LeafnodeAuthSecretName() string { return c.Name + "-leafnodes-auth" }

// LeafnodesTLSSecretName holds the leafnode listener's certificate.
func (c *NatsCluster) LeafnodesTLSSecretName() string {
	if a := c.Spec.Leafnodes; a != nil && a.Accept != nil && a.Accept.TLS != nil && a.Accept.TLS.SecretName != "" {
		return a.Accept.TLS.SecretName
	}
	return c.Name + "-leafnodes-tls"
}

// LeafnodesCertificateName is the Certificate of the leafnode listener.
func (c *NatsCluster) LeafnodesCertificateName() string { return c.Name + "-leafnodes" }

// HasLeafnodesFile reports whether the pods mount <name>-leafnodes: as soon
// as spec.leafnodes is set, so that remotes come and go by reload.
func (c *NatsCluster) HasLeafnodesFile() bool { return c.Spec.Leafnodes != nil }

// LeafnodeAuthRef is where the accepted leafnodes' password lives (mode
// users): the user's Secret or <name>-leafnodes-auth. ok is false when
// leafnodes are not accepted by password.
func (c *NatsCluster) LeafnodeAuthRef() (ref SecretKeyRef, ok bool) {
	if !c.Spec.LeafnodesAccepted() || !c.HasUsersFile() {
		return SecretKeyRef{}, false
	}
	if r := c.Spec.Leafnodes.Accept.SecretRef; r != nil {
		out := *r
		if out.Key == "" {
			out.Key = PasswordKey
		}
		return out, true
	}
	return SecretKeyRef{Name: c.LeafnodeAuthSecretName(), Key: PasswordKey}, true
}

// LeafnodeUser is the name accepted leafnodes present.
func (c *NatsCluster) LeafnodeUser() string {
	if c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.User != "" {
		return c.Spec.Leafnodes.Accept.User
	}
	return LeafnodeUserDefault
}

// LeafnodeAccount is the account accepted leafnodes join (mode users).
func (c *NatsCluster) LeafnodeAccount() string {
	if c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.Account != "" {
		return c.Spec.Leafnodes.Accept.Account
	}
	return AppAccount
}

// LeafnodeUserSecrets are the user Secrets spec.leafnodes names, sorted.
func (c *NatsCluster) LeafnodeUserSecrets() []string {
	seen := map[string]bool{}
	if ref, ok := c.LeafnodeAuthRef(); ok && c.Spec.Leafnodes.Accept.SecretRef != nil {
		seen[ref.Name] = true
	}
	if a := c.Spec.Leafnodes; a != nil && a.Accept != nil && a.Accept.TLS != nil && a.Accept.TLS.SecretName != "" {
		seen[a.Accept.TLS.SecretName] = true
	}
	for _, r := range c.Spec.LeafnodeRemotes() {
		for _, ref := range []*LocalSecretRef{r.CredsSecretRef, r.UserSecretRef, r.TLS} {
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
