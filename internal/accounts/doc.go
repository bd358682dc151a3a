// Package accounts turns NatsAccounts and NatsUsers into NATS's
// decentralized authentication: the operator, account and user JWTs a
// cluster in auth mode jwt runs on, and the creds files clients use.
//
// What a JWT says is decided by pure functions of the specs (claims*.go):
// no key, no clock, no client. Signing (sign.go) and sending an account
// JWT to the servers (push.go) are the small steps that carry it out.
//
// Keys: the NATS operator's identity key signs the operator JWT and the
// account JWTs; each account has an identity key (its public key is the
// account's name on the servers) and a signing key that signs its users,
// so that users are issued and re-issued without the identity key. Seeds
// live only in Secrets the operator owns, in the cluster's namespace,
// where no tenant reads them.
package accounts
