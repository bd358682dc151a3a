// Package accountcontroller runs NatsAccounts and their NatsUsers on
// clusters in auth mode jwt.
//
// One pass per account carries out everything that account is: its keys
// (a Secret in the cluster's namespace, made once), its users'
// credentials (a creds Secret in the account's namespace per user), the
// users it revoked, its JWT signed and pushed to every server through the
// system account, and the status of the account and of its users. The
// pass is the one writer of the account's keys Secret, so revocations
// recorded by several users' deletions at once cannot overwrite each
// other; a NatsUser's change wakes its account's pass.
//
// What the JWTs say is decided in internal/accounts (pure functions of
// the specs); which users get new credentials and which keys are revoked
// is decided here by planUsers, table-tested; the rest carries it out.
package accountcontroller
