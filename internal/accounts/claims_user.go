package accounts

import (
	"time"

	"github.com/nats-io/jwt/v2"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// User is what a user's JWT is made from.
type User struct {
	// Name is namespace/name, for whoever reads the JWT.
	Name string
	Spec v1alpha1.NatsUserSpec
	// PublicKey is the user's identity (U...); Account is the account's
	// identity, which the user JWT names as its issuer account because the
	// account's signing key, not the identity key, signs it.
	PublicKey, Account string
}

// UserClaims is the JWT of u: its permissions, connection types and
// expiry. A user JWT that the account's identity key signed (no issuer
// account) would keep working after that key is meant to be kept away:
// the issuer account is always set, and sign.go signs with the signing key.
func UserClaims(u User) (*jwt.UserClaims, error) {
	c := jwt.NewUserClaims(u.PublicKey)
	c.Name = u.Name
	c.IssuerAccount = u.Account
	if p := u.Spec.Permissions; p != nil {
		subjects(&c.Pub, p.Publish)
		subjects(&c.Sub, p.Subscribe)
		if r := p.AllowResponses; r != nil {
			resp := &jwt.ResponsePermission{MaxMsgs: r.MaxMsgs}
			if r.Expires != "" {
				d, err := time.ParseDuration(string(r.Expires))
				if err != nil {
					return nil, err
				}
				resp.Expires = d
			}
			c.Resp = resp
		}
	}
	for _, t := range u.Spec.ConnectionTypes {
		c.AllowedConnectionTypes.Add(string(t))
	}
	if e := u.Spec.ExpiresAt; e != nil {
		c.Expires = e.Unix()
	}
	return c, nil
}

func subjects(dst *jwt.Permission, p *v1alpha1.SubjectPermission) {
	if p == nil {
		return
	}
	for _, s := range p.Allow {
		dst.Allow.Add(string(s))
	}
	for _, s := range p.Deny {
		dst.Deny.Add(string(s))
	}
}

func unix(s int64) time.Time { return time.Unix(s, 0) }
