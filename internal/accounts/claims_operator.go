package accounts

import "github.com/nats-io/jwt/v2"

// SystemAccountName is the system account's name in its JWT.
const SystemAccountName = "SYS"

// OperatorClaims is the JWT of the NATS operator a cluster trusts, named
// after the cluster, with its system account.
func OperatorClaims(name, operatorKey, systemAccount string) *jwt.OperatorClaims {
	c := jwt.NewOperatorClaims(operatorKey)
	c.Name = name
	c.SystemAccount = systemAccount
	return c
}

// SystemAccountClaims is the system account's JWT, with the signing key
// that signs the operator's own system user. The servers add its
// monitoring services themselves.
func SystemAccountClaims(account, signingKey string) *jwt.AccountClaims {
	c := jwt.NewAccountClaims(account)
	c.Name = SystemAccountName
	c.SigningKeys.Add(signingKey)
	return c
}
