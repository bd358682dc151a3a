package accounts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// The NATS operator's own key signs only the operator JWT and the system
// account; the accounts are signed by a signing key the operator JWT
// lists, so that the key that signs them can be replaced without a new
// operator. A replacement goes in three steps, because nats-server reads
// the operator JWT only when it starts (a reload refuses a changed one):
//
//  1. Begin: a next key is made and listed beside the signing key; the
//     servers restart, one at a time, into trusting both.
//  2. Promote: once every server trusts the next key, it signs the
//     accounts; the key it replaces is kept, as a public key only, and
//     still listed, so that every account signed by it stays valid until
//     signed again.
//  3. Drop: once every account is signed by the new key, the previous one
//     is no longer listed; the servers restart into trusting the new key
//     alone.
//
// A trust Secret made before signing keys has none: its accounts are
// signed by the operator's own key, which stays trusted, so its first
// rotation ends after the promote.

// OperatorKeys are the operator signing keys a trust Secret holds.
type OperatorKeys struct {
	// Signing is the seed that signs the accounts; empty in a trust
	// Secret made before signing keys (the operator's own key signs).
	Signing string
	// Next is the seed listed for the servers to trust before it signs.
	Next string
	// Previous is the public key that signed before the last promote.
	Previous string
	// Rotation is the digest of the rotation request begun last.
	Rotation string
}

// ReadOperatorKeys reads the signing keys of a trust Secret's values.
func ReadOperatorKeys(values map[string]string) OperatorKeys {
	return OperatorKeys{Signing: values[OperatorSigningSeedKey], Next: values[OperatorNextSeedKey],
		Previous: values[OperatorPreviousKey], Rotation: values[OperatorRotationKey]}
}

// Trusted are the public keys the operator JWT lists, sorted.
func (k OperatorKeys) Trusted() []string {
	var out []string
	for _, seed := range []string{k.Signing, k.Next} {
		if pub, err := PublicKey([]byte(seed), nkeys.PrefixByteOperator); seed != "" && err == nil {
			out = append(out, pub)
		}
	}
	if k.Previous != "" {
		out = append(out, k.Previous)
	}
	slices.Sort(out)
	return out
}

// OperatorSigner is the seed that signs the accounts of a trust Secret,
// and its public key: the signing key, or the operator's own key in a
// Secret made before signing keys.
func OperatorSigner(values map[string]string) ([]byte, string, error) {
	seed := values[OperatorSigningSeedKey]
	if seed == "" {
		seed = values[OperatorSeedKey]
	}
	pub, err := PublicKey([]byte(seed), nkeys.PrefixByteOperator)
	if err != nil {
		return nil, "", fmt.Errorf("the operator's signing key: %v", err)
	}
	return []byte(seed), pub, nil
}

// TrustValues are a trust Secret's data as the values the functions here
// read and write.
func TrustValues(data map[string][]byte) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}

// RotationRequest is the digest a rotation request (an annotation's
// value, any length) is recorded under.
func RotationRequest(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:16])
}

// BeginOperatorRotation makes the next signing key and lists it in a new
// operator JWT, recording the request (a RotationRequest digest).
func BeginOperatorRotation(values map[string]string, request string) (map[string]string, error) {
	next, err := NewSeed(nkeys.PrefixByteOperator)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(values)
	out[OperatorNextSeedKey] = string(next)
	out[OperatorRotationKey] = request
	return out, resignOperator(out)
}

// PromoteOperatorKey makes the next key the signing key. The operator JWT
// is unchanged: it lists the same keys, the replaced one as Previous.
func PromoteOperatorKey(values map[string]string) (map[string]string, error) {
	k := ReadOperatorKeys(values)
	if k.Next == "" {
		return nil, errors.New("no next signing key to promote")
	}
	out := maps.Clone(values)
	if k.Signing != "" {
		pub, err := PublicKey([]byte(k.Signing), nkeys.PrefixByteOperator)
		if err != nil {
			return nil, err
		}
		out[OperatorPreviousKey] = pub
	}
	out[OperatorSigningSeedKey] = k.Next
	delete(out, OperatorNextSeedKey)
	return out, nil
}

// DropPreviousOperatorKey stops listing the previous signing key.
func DropPreviousOperatorKey(values map[string]string) (map[string]string, error) {
	out := maps.Clone(values)
	delete(out, OperatorPreviousKey)
	return out, resignOperator(out)
}

// resignOperator signs values' operator JWT again, with the name it had,
// listing the signing keys values hold now.
func resignOperator(values map[string]string) error {
	c, err := jwt.DecodeOperatorClaims(values[OperatorJWTKey])
	if err != nil {
		return errors.New("the operator JWT does not decode")
	}
	return signOperator(values, c.Name)
}

// signOperator writes values' operator JWT, named name, signed by the
// operator's own key and listing its signing keys, and the keys' mark.
func signOperator(values map[string]string, name string) error {
	opPub, err := PublicKey([]byte(values[OperatorSeedKey]), nkeys.PrefixByteOperator)
	if err != nil {
		return err
	}
	trusted := ReadOperatorKeys(values).Trusted()
	claims := OperatorClaims(name, opPub, values[SystemPublicKey])
	claims.SigningKeys.Add(trusted...)
	text, err := Sign(claims, []byte(values[OperatorSeedKey]))
	if err != nil {
		return err
	}
	values[OperatorJWTKey] = text
	values[OperatorSigningKeysKey] = strings.Join(trusted, ",")
	return nil
}

// checkOperatorKeys holds the operator JWT and the signing keys of a
// trust Secret to what the functions above write: seeds of operator keys,
// at most one of a next and a previous key, and an operator JWT of the
// Secret's own operator key and system account that lists exactly the
// keys held, as the mark does. Errors name keys, never values.
func checkOperatorKeys(data map[string][]byte) error {
	values := TrustValues(data)
	k := ReadOperatorKeys(values)
	for key, seed := range map[string]string{OperatorSigningSeedKey: k.Signing, OperatorNextSeedKey: k.Next} {
		if _, err := PublicKey([]byte(seed), nkeys.PrefixByteOperator); seed != "" && err != nil {
			return fmt.Errorf("the trust Secret's %s: %v", key, err)
		}
	}
	switch {
	case k.Previous != "" && !nkeys.IsValidPublicOperatorKey(k.Previous):
		return fmt.Errorf("the trust Secret's %s is not an operator public key", OperatorPreviousKey)
	case k.Previous != "" && k.Next != "":
		return fmt.Errorf("the trust Secret holds both %s and %s", OperatorPreviousKey, OperatorNextSeedKey)
	}
	c, err := jwt.DecodeOperatorClaims(values[OperatorJWTKey])
	if err != nil {
		return fmt.Errorf("the trust Secret's %s is not an operator JWT", OperatorJWTKey)
	}
	opPub, _ := PublicKey([]byte(values[OperatorSeedKey]), nkeys.PrefixByteOperator)
	listed := slices.Sorted(slices.Values(c.SigningKeys))
	trusted := k.Trusted()
	switch {
	case c.Subject != opPub || c.Issuer != opPub:
		return fmt.Errorf("the trust Secret's %s is not its %s's", OperatorJWTKey, OperatorSeedKey)
	case c.SystemAccount != values[SystemPublicKey]:
		return fmt.Errorf("the trust Secret's %s names another system account", OperatorJWTKey)
	case !slices.Equal(listed, trusted):
		return fmt.Errorf("the trust Secret's %s lists other signing keys than it holds", OperatorJWTKey)
	case values[OperatorSigningKeysKey] != strings.Join(trusted, ","):
		return fmt.Errorf("the trust Secret's %s is not the keys it holds", OperatorSigningKeysKey)
	}
	return nil
}
