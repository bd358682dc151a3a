package render

import (
	"errors"
	"path"

	"github.com/kubenats/kubenats/internal/natsconf"
)

// In mode jwt the servers trust a NATS operator whose keys the operator
// keeps in the trust Secret, <name>-operator, which no pod mounts: the
// seeds never leave it. nats.conf carries only the public part (the
// operator's and the system account's JWTs and public key), and every
// account JWT is pushed to the servers' full resolver, which keeps them on
// the JetStream volume beside the streams.

// Keys of the trust Secret: the seeds, which only the operator reads, and
// the JWTs and public key that nats.conf carries.
const (
	TrustOperatorSeedKey      = "operator.seed"
	TrustSystemSeedKey        = "system-account.seed"
	TrustSystemSigningSeedKey = "system-signing.seed"
	TrustSystemUserSeedKey    = "system-user.seed"
	TrustOperatorJWTKey       = "operator.jwt"
	TrustSystemPublicKey      = "system-account.pub"
	TrustSystemJWTKey         = "system-account.jwt"
	TrustSystemUserJWTKey     = "system-user.jwt"

	// The operator's signing keys: the one that signs the accounts now,
	// one the servers are brought to trust before it signs (a rotation
	// under way), and the public key of one that signed until a rotation
	// and stays trusted until every account is signed again.
	TrustOperatorSigningSeedKey = "operator-signing.seed"
	TrustOperatorNextSeedKey    = "operator-signing-next.seed"
	TrustOperatorPreviousKey    = "operator-signing-previous.pub"
	TrustOperatorSigningKeysKey = "operator-signing-keys"
	TrustOperatorRotationKey    = "operator-rotation"
)

// MetadataOperatorKeysKey is the server metadata mark of the signing keys
// the operator JWT a server runs with lists (TrustOperatorSigningKeysKey):
// a server reports which keys it trusts, so that a rotation goes on only
// once every server does.
const MetadataOperatorKeysKey = "kubenats.io/operator-signing-keys"

// ResolverDir is where the full resolver keeps the account JWTs: on the
// JetStream claim, so that they outlive a pod.
var ResolverDir = path.Join(StoreDir, "jwt")

// errNoTrust: mode jwt without the trust Secret's values (`kubenats
// render` has none to give).
var errNoTrust = errors.New("auth.mode jwt: the NATS operator's keys are made by the running operator; kubenats render cannot write nats.conf without them")

// trustConf is the public part of the trust Secret's values, as nats.conf
// writes it; nil without values.
func trustConf(values map[string]string) *natsconf.Trust {
	if len(values) == 0 {
		return nil
	}
	return &natsconf.Trust{
		OperatorJWT:      values[TrustOperatorJWTKey],
		SystemAccount:    values[TrustSystemPublicKey],
		SystemAccountJWT: values[TrustSystemJWTKey],
		ResolverDir:      ResolverDir,
	}
}

// OperatorKeysMark is the mark of the signing keys the operator JWT in
// values lists ("" before the trust Secret had any).
func OperatorKeysMark(values map[string]string) string { return values[TrustOperatorSigningKeysKey] }
