package accountcontroller

import (
	"github.com/kubenats/kubenats/api/v1alpha1"
)

// credsState is what a user's creds Secret is, as read.
type credsState int

const (
	credsNone    credsState = iota // no Secret of that name
	credsOurs                      // made by the operator for this user
	credsForeign                   // someone else's: never overwritten
)

// userView is a user and its creds Secret, as one pass read them.
type userView struct {
	User  *v1alpha1.NatsUser
	Creds credsState
	// SeedKey is the public key of the seed in our creds Secret; empty
	// when there is none or it does not read as a user seed.
	SeedKey string
	// Digest is what our creds Secret was last written for.
	Digest string
	// seed is the seed behind SeedKey, which a re-issue keeps.
	seed []byte
}

// issue is a user whose creds Secret is written this pass.
type issue struct {
	User *v1alpha1.NatsUser
	// NewKey: the user gets a new key (first issue, or its Secret lost or
	// holds another key); otherwise the Secret's seed is kept.
	NewKey bool
}

// userPlan is what one pass does for an account's users.
type userPlan struct {
	Issue    []issue
	Current  []current            // creds up to date
	Conflict []*v1alpha1.NatsUser // the Secret's name is taken
	// Revoke are user keys revoked before the push: those of deleted
	// users, and a key replaced by a new one (whoever changed or deleted
	// the Secret may still hold the old creds).
	Revoke []string
	// Release are deleted users whose finalizer goes once the revocation
	// is on the servers.
	Release []*v1alpha1.NatsUser
}

// planUsers decides, for each user of an account, whether its creds are
// current, written anew with its key, or written with a new key (and the
// old revoked). want is the digest a user's creds must be written for.
//
// A key is kept only from a Secret the operator made for that user whose
// seed is the key the user's status names (or, with no key in status, a
// status lost, the Secret's own): a seed put there by anyone else gets
// the user a new key, and the key status named is revoked.
func planUsers(views []userView, want func(*v1alpha1.NatsUser) string) userPlan {
	var p userPlan
	for _, v := range views {
		u := v.User
		issued := u.Status.PublicKey
		if !u.DeletionTimestamp.IsZero() {
			p.Revoke = appendKey(p.Revoke, issued)
			if v.Creds == credsOurs && v.SeedKey != issued {
				p.Revoke = appendKey(p.Revoke, v.SeedKey)
			}
			p.Release = append(p.Release, u)
			continue
		}
		switch {
		case v.Creds == credsForeign:
			p.Conflict = append(p.Conflict, u)
		case v.Creds == credsOurs && v.SeedKey != "" && (issued == "" || issued == v.SeedKey):
			// Current creds are not written again, a status that lost the
			// key included: it takes the key from the Secret. A rewrite
			// would hand every reader of the Secret new bytes for nothing
			// (a pass whose account status write conflicted left its
			// users' status without the key, and the next one rewrote
			// each user's creds).
			if v.Digest == want(u) {
				p.Current = append(p.Current, current{User: u, Key: v.SeedKey})
			} else {
				p.Issue = append(p.Issue, issue{User: u})
			}
		default:
			p.Issue = append(p.Issue, issue{User: u, NewKey: true})
			p.Revoke = appendKey(p.Revoke, issued)
		}
	}
	return p
}

// current is a user whose creds are up to date, and the key they hold.
type current struct {
	User *v1alpha1.NatsUser
	Key  string
}

func appendKey(keys []string, k string) []string {
	if k == "" {
		return keys
	}
	return append(keys, k)
}
