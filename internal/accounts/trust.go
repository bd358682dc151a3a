package accounts

import (
	"fmt"

	"github.com/nats-io/nkeys"

	"github.com/kubenats/kubenats/internal/render"
)

// The trust Secret's keys, which render names (it writes the Secret).
const (
	OperatorSeedKey      = render.TrustOperatorSeedKey
	SystemSeedKey        = render.TrustSystemSeedKey
	SystemSigningSeedKey = render.TrustSystemSigningSeedKey
	SystemUserSeedKey    = render.TrustSystemUserSeedKey
	OperatorJWTKey       = render.TrustOperatorJWTKey
	SystemPublicKey      = render.TrustSystemPublicKey
	SystemJWTKey         = render.TrustSystemJWTKey
	SystemUserJWTKey     = render.TrustSystemUserJWTKey

	OperatorSigningSeedKey = render.TrustOperatorSigningSeedKey
	OperatorNextSeedKey    = render.TrustOperatorNextSeedKey
	OperatorPreviousKey    = render.TrustOperatorPreviousKey
	OperatorSigningKeysKey = render.TrustOperatorSigningKeysKey
	OperatorRotationKey    = render.TrustOperatorRotationKey
)

// trustKeys are every key a trust Secret must hold.
var trustKeys = []string{OperatorSeedKey, SystemSeedKey, SystemSigningSeedKey, SystemUserSeedKey,
	OperatorJWTKey, SystemPublicKey, SystemJWTKey, SystemUserJWTKey}

// SystemUserName is the operator's own user in the system account.
const SystemUserName = "kubenats-system"

// NewTrust makes a cluster's NATS operator (named name) with a signing
// key for the accounts, its system account and the operator's system
// user, once: the values of the trust Secret. Made by the controller and
// then changed only by a rotation of the signing key (RotateOperatorKeys).
// The system account stays signed by the operator's own key: only the
// operator's system user is ever issued in it.
func NewTrust(name string) (map[string]string, error) {
	op, err := NewSeed(nkeys.PrefixByteOperator)
	if err != nil {
		return nil, err
	}
	opSigning, err := NewSeed(nkeys.PrefixByteOperator)
	if err != nil {
		return nil, err
	}
	sys, err := NewSeed(nkeys.PrefixByteAccount)
	if err != nil {
		return nil, err
	}
	signing, err := NewSeed(nkeys.PrefixByteAccount)
	if err != nil {
		return nil, err
	}
	user, err := NewSeed(nkeys.PrefixByteUser)
	if err != nil {
		return nil, err
	}
	sysPub, _ := PublicKey(sys, nkeys.PrefixByteAccount)
	signingPub, _ := PublicKey(signing, nkeys.PrefixByteAccount)
	userPub, _ := PublicKey(user, nkeys.PrefixByteUser)
	sysJWT, err := Sign(SystemAccountClaims(sysPub, signingPub), op)
	if err != nil {
		return nil, err
	}
	uc, err := UserClaims(User{Name: SystemUserName, PublicKey: userPub, Account: sysPub})
	if err != nil {
		return nil, err
	}
	userJWT, err := Sign(uc, signing)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		OperatorSeedKey: string(op), SystemSeedKey: string(sys), SystemSigningSeedKey: string(signing),
		SystemUserSeedKey: string(user), SystemPublicKey: sysPub,
		SystemJWTKey: sysJWT, SystemUserJWTKey: userJWT, OperatorSigningSeedKey: string(opSigning),
	}
	return values, signOperator(values, name)
}

// CheckTrust holds a trust Secret's values to what NewTrust writes: every
// key there, each seed of its kind, the system account's public key its
// seed's. A Secret edited by hand is refused, not half used. The error
// names keys, never values.
func CheckTrust(data map[string][]byte) error {
	for _, k := range trustKeys {
		if len(data[k]) == 0 {
			return fmt.Errorf("the trust Secret lacks %s", k)
		}
	}
	kinds := map[string]nkeys.PrefixByte{OperatorSeedKey: nkeys.PrefixByteOperator, SystemSeedKey: nkeys.PrefixByteAccount,
		SystemSigningSeedKey: nkeys.PrefixByteAccount, SystemUserSeedKey: nkeys.PrefixByteUser}
	for k, kind := range kinds {
		if _, err := PublicKey(data[k], kind); err != nil {
			return fmt.Errorf("the trust Secret's %s: %v", k, err)
		}
	}
	if pub, _ := PublicKey(data[SystemSeedKey], nkeys.PrefixByteAccount); pub != string(data[SystemPublicKey]) {
		return fmt.Errorf("the trust Secret's %s is not its %s's", SystemPublicKey, SystemSeedKey)
	}
	return checkOperatorKeys(data)
}
