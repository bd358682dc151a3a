// Package webhook is the operator's validating admission webhook. It
// refuses what CEL in a CRD or an admission policy cannot judge because
// the answer lies in another object: a NatsUser, or a JetStream resource,
// naming a NatsAccount its namespace does not have. It also keeps the
// webhook's serving certificate, in a Secret of the operator's namespace,
// and the CA bundle by which the API server trusts it.
//
// Its failure policy is Ignore: while no replica of the operator answers,
// what it would refuse is admitted, and the resource's condition
// (AccountNotFound) says what it says now. Nothing that names a missing
// account is acted upon either way.
package webhook
