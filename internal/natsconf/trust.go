package natsconf

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Trust is decentralized authentication (auth mode jwt): the servers trust
// one NATS operator, and learn every account from a JWT signed by it,
// stored by the full resolver on their own volumes. Everything here is
// public (JWTs and public keys): no seed is ever written into nats.conf.
type Trust struct {
	// OperatorJWT is the operator's JWT, written inline.
	OperatorJWT string
	// SystemAccount is the system account's public key (A...).
	SystemAccount string
	// SystemAccountJWT is preloaded: a server must know the system account
	// before anything can be pushed to it through that account.
	SystemAccountJWT string
	// ResolverDir is where the full resolver keeps the account JWTs; it
	// must exist and be writable when the server starts.
	ResolverDir string
}

var (
	jwtText       = regexp.MustCompile(`^eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+$`)
	accountPubKey = regexp.MustCompile(`^A[A-Z2-7]{55}$`)
)

func (t *Trust) validate() error {
	switch {
	case !jwtText.MatchString(t.OperatorJWT):
		return errors.New("trust: the operator JWT is not a JWT")
	case !accountPubKey.MatchString(t.SystemAccount):
		return errors.New("trust: the system account is not an account public key")
	case !jwtText.MatchString(t.SystemAccountJWT):
		return errors.New("trust: the system account JWT is not a JWT")
	case !strings.HasPrefix(t.ResolverDir, "/"):
		return errors.New("trust: the resolver directory must be absolute")
	}
	return nil
}

// writeTrust writes operator, system_account, the full resolver and its
// preload. allow_delete stays off: an account's JWT is updated (its users
// revoked), never removed, so that a deleted account's old credentials
// stay refused on a server that was down when it went.
func (c *Config) writeTrust(w *confWriter) error {
	t := c.Trust
	if t == nil {
		return nil
	}
	if err := t.validate(); err != nil {
		return err
	}
	if err := writeString(w, "operator", t.OperatorJWT); err != nil {
		return err
	}
	if err := writeString(w, "system_account", t.SystemAccount); err != nil {
		return err
	}
	w.openBlock("resolver")
	w.keyValue("type", "full")
	if err := writeString(w, "dir", t.ResolverDir); err != nil {
		return fmt.Errorf("resolver: %w", err)
	}
	w.keyValue("allow_delete", "false")
	// Servers compare their stores this often and fetch what they miss:
	// one that was down during a push catches up without the operator.
	w.keyValue("interval", `"2m"`)
	w.closeBlock()
	w.openBlock("resolver_preload")
	if err := writeString(w, t.SystemAccount, t.SystemAccountJWT); err != nil {
		return err
	}
	w.closeBlock()
	return nil
}
