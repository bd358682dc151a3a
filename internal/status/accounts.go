package status

import "github.com/kubenats/kubenats/api/v1alpha1"

// AccountPass is how a pass over a NatsAccount or a NatsUser ended, from
// its Ready reason. The refusals only someone's change lifts stall it: the
// cluster does not admit the account (missing, not in mode jwt, or the
// namespace not allowed), its keys are gone, another's or unreadable, a
// Secret's name is taken. The rest pass by themselves or with another
// resource, so they are in progress: a push the servers did not take yet,
// credentials not written yet, an account or an import's exporter that is
// not there (or not ready) yet.
func AccountPass(ready bool, reason, message string) Pass {
	return Pass{Ready: ready, Stalled: !ready && accountStalls(reason), Reason: reason, Message: message}
}

// UserOfUnreadyAccount is the pass of a NatsUser whose account's pass
// ended short for accountReason: it stalls when its account does, and
// waits with it otherwise.
func UserOfUnreadyAccount(accountReason, message string) Pass {
	return Pass{Stalled: accountStalls(accountReason), Reason: v1alpha1.ReasonAccountNotFound, Message: "the account is not ready: " + message}
}

func accountStalls(reason string) bool {
	switch reason {
	case v1alpha1.ReasonClusterNotAdmitted, v1alpha1.ReasonAccountKeysMissing, v1alpha1.ReasonAccountKeysMismatch,
		v1alpha1.ReasonNameConflict, v1alpha1.ReasonSecretInvalid:
		return true
	}
	return false
}
