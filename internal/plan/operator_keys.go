package plan

import "fmt"

// OperatorKeysObservation is what a rotation of the NATS operator's
// signing key (mode jwt) goes on from: the request, the keys the trust
// Secret holds, what the servers run with and what the accounts are
// signed by.
type OperatorKeysObservation struct {
	// Requested is the digest of the rotation asked for ("" when none).
	Requested string
	// Begun is the digest of the rotation begun last ("" when none).
	Begun string
	// Next: a key is listed that does not sign yet (step 1 under way).
	Next bool
	// Previous: a key that no longer signs is still listed (step 2).
	Previous bool
	// ServersTrust: every server runs with the operator JWT the trust
	// Secret holds now (each reported its keys' mark).
	ServersTrust bool
	// Accounts are the cluster's live accounts with keys; Unsigned those
	// of them whose JWT on the servers is not yet signed by the signing
	// key (namespace/name).
	Accounts int
	Unsigned []string
}

// OperatorKeysStep is what to do now, and the OperatorSigningKeyRotated
// condition (Reason empty before any rotation was asked for).
type OperatorKeysStep struct {
	Begin, Promote, Drop bool
	// InProgress: look again soon; nothing raises an event when servers
	// restart into new keys or accounts are signed again.
	InProgress bool
	Done       bool
	Reason     string
	Message    string
}

// Reasons of the OperatorSigningKeyRotated condition.
const (
	OperatorKeyTrusting  = "TrustingNextKey"
	OperatorKeyResigning = "SigningAccounts"
	OperatorKeyDropping  = "DroppingPreviousKey"
	OperatorKeyRotated   = "Rotated"
)

// OperatorKeys decides the next step of a rotation (see
// accounts.BeginOperatorRotation for the three steps). A step goes on only
// when the one before has reached every server or account: an account
// signed by a key some server does not trust yet is refused by that server,
// and a key dropped while an account is signed by it locks that account
// out of every restarted server. A new request while one is under way
// waits for it to end.
func OperatorKeys(o OperatorKeysObservation) OperatorKeysStep {
	newRequest := o.Requested != "" && o.Requested != o.Begun
	switch {
	case o.Next && !o.ServersTrust:
		return OperatorKeysStep{InProgress: true, Reason: OperatorKeyTrusting,
			Message: "the servers restart, one at a time, into trusting the next signing key beside the current one"}
	case o.Next:
		return OperatorKeysStep{Promote: true, InProgress: true, Reason: OperatorKeyResigning,
			Message: "every server trusts the next signing key; the accounts are signed with it"}
	case o.Previous && len(o.Unsigned) > 0:
		return OperatorKeysStep{InProgress: true, Reason: OperatorKeyResigning,
			Message: fmt.Sprintf("%d of %d accounts are signed with the new signing key; waiting for %s",
				o.Accounts-len(o.Unsigned), o.Accounts, named(o.Unsigned))}
	case o.Previous:
		return OperatorKeysStep{Drop: true, InProgress: true, Reason: OperatorKeyDropping,
			Message: "every account is signed with the new signing key; the servers restart, one at a time, into no longer trusting the previous one"}
	case newRequest:
		return OperatorKeysStep{Begin: true, InProgress: true, Reason: OperatorKeyTrusting,
			Message: "a new signing key is made; the servers restart, one at a time, into trusting it beside the current one"}
	case o.Begun == "":
		return OperatorKeysStep{}
	case !o.ServersTrust:
		return OperatorKeysStep{InProgress: true, Reason: OperatorKeyDropping,
			Message: "the servers restart, one at a time, into no longer trusting the previous signing key"}
	default:
		return OperatorKeysStep{Done: true, Reason: OperatorKeyRotated,
			Message: "the accounts are signed with the new signing key, and no server trusts the previous one"}
	}
}
