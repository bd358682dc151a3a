package accounts

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// An account's keys live in a Secret of the cluster's namespace, where no
// tenant reads them: its identity seed (whose public key is the account's
// name on the servers, and signs the activations of its exports), the
// signing seed that signs its users, and the users it revoked. The
// revocations are kept here, not only in the JWT on the servers, because
// every account JWT is signed anew from this Secret: a revocation that
// lived only in the last JWT would be dropped by the next.
const (
	AccountSeedKey        = "account.seed"
	AccountSigningSeedKey = "signing.seed"
	AccountRevocationsKey = "revocations.json"
	// AccountOperatorCredsKey is the creds of the operator's own user in
	// the account, with which it manages the account's JetStream objects
	// (never with another account's rights).
	AccountOperatorCredsKey = "kubenats.creds"
	// AccountPreviousSigningSeedKey is the signing key a rotation
	// replaced, kept in the account JWT until every user is re-issued and
	// the grace is over, so that connected clients stay connected.
	AccountPreviousSigningSeedKey = "previous-signing.seed"
	// AccountRotationKey records the last rotation: the request it
	// answered and when the previous key may go.
	AccountRotationKey = "rotation.json"
)

// OperatorUserName names the operator's own user in every account.
const OperatorUserName = "kubenats"

// AllUsers in the revocations revokes every user issued before its time:
// what a deleted account leaves, so that a NatsAccount made again with
// its name (and so its keys) does not bring its old users back.
const AllUsers = jwt.All

// MaxRevocations bounds an account's revoked users: each is ~70 bytes of
// the account JWT every server stores and every update carries.
const MaxRevocations = 4096

// AccountKeys are an account's keys and revocations.
type AccountKeys struct {
	// Account is the account the keys were made for, recorded in the
	// Secret beside them (AccountRecordKey) and checked on every read.
	Account               AccountRef
	Seed, SigningSeed     []byte
	PublicKey, SigningKey string
	// Revoked: user public key -> Unix time before which its JWTs are refused.
	Revoked map[string]int64
	// OperatorCreds is the operator's own user's creds file; empty in a
	// Secret made before it was kept there (WithOperatorUser adds it).
	OperatorCreds []byte
	// PreviousSigningSeed and PreviousSigningKey are the signing key a
	// rotation replaced, while it is kept; Rotation says which request
	// rotated and until when the previous key is kept at least.
	PreviousSigningSeed []byte
	PreviousSigningKey  string
	Rotation            Rotation
}

// Rotation is the state of an account's last signing key rotation.
type Rotation struct {
	// For is the rotation request (the annotation's value) it answered.
	For string `json:"for,omitempty"`
	// PreviousUntil is the Unix time before which the previous key stays.
	PreviousUntil int64 `json:"previousUntil,omitempty"`
}

// NewAccountKeys makes the keys of account ref, once.
func NewAccountKeys(ref AccountRef) (AccountKeys, error) {
	seed, err := NewSeed(nkeys.PrefixByteAccount)
	if err != nil {
		return AccountKeys{}, err
	}
	signing, err := NewSeed(nkeys.PrefixByteAccount)
	if err != nil {
		return AccountKeys{}, err
	}
	keys, err := readKeyMaterial(map[string][]byte{AccountSeedKey: seed, AccountSigningSeedKey: signing})
	if err != nil {
		return keys, err
	}
	keys.Account = ref
	return keys.WithOperatorUser()
}

// WithOperatorUser returns k with the operator's own user issued, by the
// account's signing key, if it has none.
func (k AccountKeys) WithOperatorUser() (AccountKeys, error) {
	if len(k.OperatorCreds) > 0 {
		return k, nil
	}
	seed, err := NewSeed(nkeys.PrefixByteUser)
	if err != nil {
		return k, err
	}
	pub, _ := PublicKey(seed, nkeys.PrefixByteUser)
	claims, err := UserClaims(User{Name: OperatorUserName, PublicKey: pub, Account: k.PublicKey})
	if err != nil {
		return k, err
	}
	userJWT, err := Sign(claims, k.SigningSeed)
	if err != nil {
		return k, err
	}
	if k.OperatorCreds, err = Creds(userJWT, seed); err != nil {
		return k, err
	}
	return k, nil
}

// readKeyMaterial reads a keys Secret's seeds, rotation and revocations,
// holding them to what NewAccountKeys writes: seeds of accounts,
// revocations of user keys, at most MaxRevocations. It does not say whose
// keys they are: ReadAccountKeysFor does. The error names keys, never
// values.
func readKeyMaterial(data map[string][]byte) (AccountKeys, error) {
	var k AccountKeys
	var err error
	if k.PublicKey, err = PublicKey(data[AccountSeedKey], nkeys.PrefixByteAccount); err != nil {
		return k, fmt.Errorf("%s: %v", AccountSeedKey, err)
	}
	if k.SigningKey, err = PublicKey(data[AccountSigningSeedKey], nkeys.PrefixByteAccount); err != nil {
		return k, fmt.Errorf("%s: %v", AccountSigningSeedKey, err)
	}
	k.Seed, k.SigningSeed = data[AccountSeedKey], data[AccountSigningSeedKey]
	k.OperatorCreds = data[AccountOperatorCredsKey]
	if prev := data[AccountPreviousSigningSeedKey]; len(prev) > 0 {
		if k.PreviousSigningKey, err = PublicKey(prev, nkeys.PrefixByteAccount); err != nil {
			return k, fmt.Errorf("%s: %v", AccountPreviousSigningSeedKey, err)
		}
		k.PreviousSigningSeed = prev
	}
	if raw := data[AccountRotationKey]; len(raw) > 0 {
		if len(raw) > 1024 || json.Unmarshal(raw, &k.Rotation) != nil {
			return k, fmt.Errorf("%s: not a rotation record", AccountRotationKey)
		}
	}
	k.Revoked = map[string]int64{}
	if raw := data[AccountRevocationsKey]; len(raw) > 0 {
		if len(raw) > MaxRevocations*80 {
			return k, fmt.Errorf("%s: more than %d revocations", AccountRevocationsKey, MaxRevocations)
		}
		if err := json.Unmarshal(raw, &k.Revoked); err != nil {
			return k, fmt.Errorf("%s: not a map of user keys to times", AccountRevocationsKey)
		}
		if len(k.Revoked) > MaxRevocations {
			return k, fmt.Errorf("%s: more than %d revocations", AccountRevocationsKey, MaxRevocations)
		}
		for user, at := range k.Revoked {
			if (user != AllUsers && !nkeys.IsValidPublicUserKey(user)) || at <= 0 {
				return k, fmt.Errorf("%s: an entry that is not a user key and a time", AccountRevocationsKey)
			}
		}
	}
	return k, nil
}

// Data is the keys Secret's data.
func (k AccountKeys) Data() map[string][]byte {
	revoked, _ := json.Marshal(k.Revoked) // a map of strings to ints always encodes
	if k.Revoked == nil {
		revoked = []byte("{}")
	}
	data := map[string][]byte{AccountSeedKey: k.Seed, AccountSigningSeedKey: k.SigningSeed, AccountRevocationsKey: revoked,
		AccountRecordKey: k.record()}
	if len(k.OperatorCreds) > 0 {
		data[AccountOperatorCredsKey] = k.OperatorCreds
	}
	if len(k.PreviousSigningSeed) > 0 {
		data[AccountPreviousSigningSeedKey] = k.PreviousSigningSeed
	}
	if k.Rotation != (Rotation{}) {
		data[AccountRotationKey], _ = json.Marshal(k.Rotation)
	}
	return data
}

// Revoke returns k with users revoked as of at; changed says whether any
// was new. A user already revoked keeps its earlier time. Past
// MaxRevocations it refuses: the account's JWT would outgrow what the
// servers take.
func (k AccountKeys) Revoke(users []string, at int64) (_ AccountKeys, changed bool, _ error) {
	out := k
	out.Revoked = maps.Clone(k.Revoked)
	if out.Revoked == nil {
		out.Revoked = map[string]int64{}
	}
	for _, u := range users {
		if _, ok := out.Revoked[u]; ok || u == "" {
			continue
		}
		out.Revoked[u] = at
		changed = true
	}
	if len(out.Revoked) > MaxRevocations {
		return k, false, fmt.Errorf("the account has revoked %d users, the most it keeps", MaxRevocations)
	}
	return out, changed, nil
}

// Rotate answers the rotation request token: a new signing key, the
// current one kept as the previous until at least until (and until every
// user is re-issued: DropPrevious), the operator's own user re-issued at
// once. A request already answered, or none, changes nothing.
func (k AccountKeys) Rotate(token string, until int64) (_ AccountKeys, changed bool, _ error) {
	if token == "" || token == k.Rotation.For {
		return k, false, nil
	}
	seed, err := NewSeed(nkeys.PrefixByteAccount)
	if err != nil {
		return k, false, err
	}
	out := k
	out.PreviousSigningSeed, out.PreviousSigningKey = k.SigningSeed, k.SigningKey
	out.SigningSeed = seed
	out.SigningKey, _ = PublicKey(seed, nkeys.PrefixByteAccount)
	out.Rotation = Rotation{For: token, PreviousUntil: until}
	out.OperatorCreds = nil
	if out, err = out.WithOperatorUser(); err != nil {
		return k, false, err
	}
	return out, true, nil
}

// DropPrevious returns k without its previous signing key once it may go:
// the grace is over at now and every user holds creds of the current key
// (allReissued). Users still holding the previous key's creds are
// refused from then on, and connected ones are disconnected.
func (k AccountKeys) DropPrevious(now int64, allReissued bool) (_ AccountKeys, changed bool) {
	if k.PreviousSigningKey == "" || now < k.Rotation.PreviousUntil || !allReissued {
		return k, false
	}
	out := k
	out.PreviousSigningSeed, out.PreviousSigningKey = nil, ""
	return out, true
}
