package accounts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Whose keys a keys Secret holds is never inferred from its name alone:
// the name is where the operator looks, the record in the data says which
// account (namespace, name and public key) the keys were made for, and
// keys are used only for exactly that account. A name that two accounts
// can share (before, 48 bits of a digest, which a tenant could collide
// with another namespace's account in under a minute) would otherwise
// hand one account the other's signing keys, its users and its deletion.

// AccountRecordKey holds, in a keys Secret, the account the keys were
// made for, as JSON: {"namespace", "name", "publicKey"}.
const AccountRecordKey = "account.json"

// KeysSecretName is the Secret of account ref's keys on the cluster named
// cluster: the cluster's name and the full SHA-256 of the account's
// namespace and name (neither can hold a "/", so the input names one
// account). 52 + 9 + 64 characters fit a Secret's name (253).
func KeysSecretName(cluster string, ref AccountRef) string {
	sum := sha256.Sum256([]byte(ref.Namespace + "/" + ref.Name))
	return cluster + "-account-" + hex.EncodeToString(sum[:])
}

// LegacyKeysSecretName is where versions before the record kept account
// ref's keys: 48 bits of the same digest, which two accounts can share.
// It is read only to migrate (AdoptLegacyKeys), never to find keys.
func LegacyKeysSecretName(cluster string, ref AccountRef) string {
	sum := sha256.Sum256([]byte(ref.Namespace + "/" + ref.Name))
	return cluster + "-account-" + hex.EncodeToString(sum[:6])
}

// keysRecord is what AccountRecordKey holds.
type keysRecord struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	PublicKey string `json:"publicKey"`
}

// maxRecord bounds the record read: two names of at most 253 characters
// and a public key.
const maxRecord = 1024

func (k AccountKeys) record() []byte {
	b, _ := json.Marshal(keysRecord{Namespace: k.Account.Namespace, Name: k.Account.Name, PublicKey: k.PublicKey})
	return b
}

// ErrKeysOfAnotherAccount: the keys are not recorded for the account that
// looked them up. Nothing is signed, issued or revoked with them.
var ErrKeysOfAnotherAccount = errors.New("the keys Secret was made for another account")

// ReadAccountKeysFor reads the keys of account ref from a keys Secret's
// data: refused (ErrKeysOfAnotherAccount) unless the record names
// exactly ref and the public key of the identity seed beside it, and,
// when known (the public key the account's status names) is set, that
// key too. A Secret without a record is refused as well: every Secret
// this version writes has one, and an older one is migrated by
// AdoptLegacyKeys, which asks for more.
func ReadAccountKeysFor(ref AccountRef, known string, data map[string][]byte) (AccountKeys, error) {
	k, err := readKeyMaterial(data)
	if err != nil {
		return AccountKeys{}, err
	}
	raw := data[AccountRecordKey]
	var rec keysRecord
	if len(raw) == 0 || len(raw) > maxRecord || json.Unmarshal(raw, &rec) != nil {
		return AccountKeys{}, fmt.Errorf("%w: %s is missing or unreadable", ErrKeysOfAnotherAccount, AccountRecordKey)
	}
	if err := sameAccount(ref, known, k, AccountRef{Namespace: rec.Namespace, Name: rec.Name}, rec.PublicKey); err != nil {
		return AccountKeys{}, err
	}
	k.Account = ref
	return k, nil
}

// AdoptLegacyKeys reads keys a version before the record wrote under
// LegacyKeysSecretName, for account ref: only when the Secret names
// exactly ref (recordedFor, its kubenats.io/account annotation, which
// those versions always wrote) and holds no record of another account,
// and the seed is the key the account's status names (known), when it
// names one. A legacy Secret another account made, whose name ref's
// shares, is ErrKeysOfAnotherAccount: ref gets keys of its own.
func AdoptLegacyKeys(ref AccountRef, recordedFor, known string, data map[string][]byte) (AccountKeys, error) {
	k, err := readKeyMaterial(data)
	if err != nil {
		return AccountKeys{}, err
	}
	if recordedFor != ref.String() {
		return AccountKeys{}, fmt.Errorf("%w: the legacy Secret is annotated for another account", ErrKeysOfAnotherAccount)
	}
	if len(data[AccountRecordKey]) > 0 {
		return ReadAccountKeysFor(ref, known, data)
	}
	if err := sameAccount(ref, known, k, ref, k.PublicKey); err != nil {
		return AccountKeys{}, err
	}
	k.Account = ref
	return k, nil
}

// sameAccount holds keys k, recorded for account rec with public key
// recKey, to account ref and the public key its status names (known).
func sameAccount(ref AccountRef, known string, k AccountKeys, rec AccountRef, recKey string) error {
	switch {
	case rec != ref:
		return fmt.Errorf("%w: it records another namespace/name", ErrKeysOfAnotherAccount)
	case recKey != k.PublicKey:
		return fmt.Errorf("%w: its record names another public key than its seed's", ErrKeysOfAnotherAccount)
	case known != "" && known != k.PublicKey:
		return fmt.Errorf("%w: its public key is not the one the account's status names", ErrKeysOfAnotherAccount)
	}
	return nil
}
