package accounts

import (
	"fmt"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// NewSeed makes a key of the given kind: nkeys.PrefixByteOperator,
// ...Account or ...User. Its seed begins SO, SA or SU.
func NewSeed(kind nkeys.PrefixByte) ([]byte, error) {
	kp, err := nkeys.CreatePair(kind)
	if err != nil {
		return nil, err
	}
	return kp.Seed()
}

// PublicKey is the public key of seed, checked to be of the kind expected:
// a seed read from a Secret is not trusted to be what its key says.
func PublicKey(seed []byte, kind nkeys.PrefixByte) (string, error) {
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return "", fmt.Errorf("not an nkey seed")
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return "", err
	}
	if !nkeys.IsValidPublicKey(pub) || nkeys.Prefix(pub) != kind {
		return "", fmt.Errorf("a seed of another kind")
	}
	return pub, nil
}

// encoder is a claim that signs itself: every jwt claims type.
type encoder interface {
	Encode(nkeys.KeyPair) (string, error)
}

// Sign encodes claims signed with seed. The error never carries the seed.
func Sign(claims encoder, seed []byte) (string, error) {
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return "", fmt.Errorf("signing key: not an nkey seed")
	}
	defer kp.Wipe()
	return claims.Encode(kp)
}

// SignAccount signs an account's claims with the operator's key, and each
// activation its import needs with the exporter's signing key (exporters
// looks an exporter's signing seed up), writing the tokens into the
// imports.
func SignAccount(c *jwt.AccountClaims, acts []Activation, operator []byte, exporters func(AccountRef) (seed []byte, account string, ok bool)) (string, error) {
	for _, a := range acts {
		seed, account, ok := exporters(a.Exporter)
		if !ok {
			return "", fmt.Errorf("no signing key for account %s", a.Exporter)
		}
		a.Claims.IssuerAccount = account
		token, err := Sign(a.Claims, seed)
		if err != nil {
			return "", err
		}
		c.Imports[a.Import].Token = token
	}
	return Sign(c, operator)
}

// Creds is a creds file as nsc writes it: the user's JWT and seed between
// their BEGIN and END lines, for `nats --creds` and nats.go's
// UserCredentials.
func Creds(userJWT string, userSeed []byte) ([]byte, error) {
	return jwt.FormatUserConfig(userJWT, userSeed)
}
