package v1alpha1

// What a defaulted spec implies for authentication: which Secrets the
// operator makes and reads, and which users the servers know. render and
// the controllers read these; none of them touches the API server.

// Keys of the Secrets the operator generates.
const (
	PasswordKey = "password"
	TokenKey    = "token"
)

// Account and user names the servers know in mode users.
const (
	// AppAccount is the account clients and accepted leafnodes join.
	AppAccount = "APP"
	// LeafnodeUserDefault is the user accepted leafnodes present.
	LeafnodeUserDefault = "leaf"
)

// HasTrust reports whether c runs decentralized authentication.
func (c *NatsCluster) HasTrust() bool { return c.Spec.Auth.Mode == AuthJWT }

// HasUsersFile reports whether the servers read passwords from users.conf:
// mode users, which has a system user to reload them with.
func (c *NatsCluster) HasUsersFile() bool {
	return c.Spec.Auth.Mode == AuthUsers || c.Spec.Auth.Mode == ""
}

// HasSystemUser reports whether the operator has a system account user of
// its own: a password in mode users, a user JWT in mode jwt. nats-server
// refuses a token beside accounts, and mode none has no accounts either.
func (c *NatsCluster) HasSystemUser() bool { return c.HasUsersFile() || c.HasTrust() }

// ClientSecretRef is where the client password (mode users) or token (mode
// token) lives: the user's Secret, or <name>-auth. ok is false in modes none
// and jwt.
func (c *NatsCluster) ClientSecretRef() (ref SecretKeyRef, ok bool) {
	key := PasswordKey
	switch c.Spec.Auth.Mode {
	case AuthNone, AuthJWT: // clients' creds come from NatsUsers
		return SecretKeyRef{}, false
	case AuthToken:
		key = TokenKey
	}
	if r := c.Spec.Auth.SecretRef; r != nil {
		return *r, true
	}
	return SecretKeyRef{Name: c.AuthSecretName(), Key: key}, true
}

// GeneratesClientSecret reports whether the operator makes <name>-auth.
func (c *NatsCluster) GeneratesClientSecret() bool {
	_, ok := c.ClientSecretRef()
	return ok && c.Spec.Auth.SecretRef == nil
}

// HasRoutes reports whether the servers route to each other.
func (c *NatsCluster) HasRoutes() bool { return c.Spec.ReplicaCount() > 1 }
