package accountcontroller

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestPlanUsers: which users get credentials, which keys are revoked.
// Careless variants caught: a deleted user released without its key
// revoked (its creds would keep working), a Secret's seed trusted though
// status names another key (whoever edited the Secret picks the user's
// identity and the old key stays valid), a foreign Secret overwritten,
// creds rewritten on every pass (every application's creds would change
// under it), current creds rewritten because a pass left the user's
// status without its key (watched failing: the case "status lost").
func TestPlanUsers(t *testing.T) {
	user := func(name, key string) *v1alpha1.NatsUser {
		u := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
		u.Status.PublicKey = key
		return u
	}
	deleted := user("gone", "UGONE")
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	want := func(*v1alpha1.NatsUser) string { return "d1" }

	for _, tc := range []struct {
		name              string
		view              userView
		issue, newKey     bool
		current, conflict bool
		revoke            []string
		release           bool
	}{
		{name: "first issue", view: userView{User: user("new", "")}, issue: true, newKey: true},
		{name: "current", view: userView{User: user("app", "UAPP"), Creds: credsOurs, SeedKey: "UAPP", Digest: "d1"}, current: true},
		{name: "spec changed: same key", view: userView{User: user("app", "UAPP"), Creds: credsOurs, SeedKey: "UAPP", Digest: "d0"}, issue: true},
		{name: "status lost: the Secret's creds kept as they are", view: userView{User: user("app", ""), Creds: credsOurs, SeedKey: "UAPP", Digest: "d1"}, current: true},
		{name: "status lost, spec changed: the Secret's key kept", view: userView{User: user("app", ""), Creds: credsOurs, SeedKey: "UAPP", Digest: "d0"}, issue: true},
		{name: "Secret deleted: new key, old revoked", view: userView{User: user("app", "UAPP")}, issue: true, newKey: true, revoke: []string{"UAPP"}},
		{name: "seed replaced in the Secret", view: userView{User: user("app", "UAPP"), Creds: credsOurs, SeedKey: "UOTHER", Digest: "d1"}, issue: true, newKey: true, revoke: []string{"UAPP"}},
		{name: "unreadable seed", view: userView{User: user("app", "UAPP"), Creds: credsOurs, Digest: "d1"}, issue: true, newKey: true, revoke: []string{"UAPP"}},
		{name: "foreign Secret", view: userView{User: user("app", "UAPP"), Creds: credsForeign}, conflict: true},
		{name: "deleted", view: userView{User: deleted, Creds: credsOurs, SeedKey: "UGONE"}, revoke: []string{"UGONE"}, release: true},
		{name: "deleted, Secret holding another key", view: userView{User: deleted, Creds: credsOurs, SeedKey: "UELSE"}, revoke: []string{"UGONE", "UELSE"}, release: true},
	} {
		p := planUsers([]userView{tc.view}, want)
		if got := len(p.Issue) == 1; got != tc.issue {
			t.Errorf("%s: issued %v, want %v", tc.name, got, tc.issue)
		} else if got && p.Issue[0].NewKey != tc.newKey {
			t.Errorf("%s: new key %v, want %v", tc.name, p.Issue[0].NewKey, tc.newKey)
		}
		if got := len(p.Current) == 1; got != tc.current {
			t.Errorf("%s: current %v, want %v", tc.name, got, tc.current)
		} else if got && p.Current[0].Key != tc.view.SeedKey {
			t.Errorf("%s: current with key %q, want the Secret's %q", tc.name, p.Current[0].Key, tc.view.SeedKey)
		}
		if got := len(p.Conflict) == 1; got != tc.conflict {
			t.Errorf("%s: conflict %v, want %v", tc.name, got, tc.conflict)
		}
		if !slices.Equal(p.Revoke, tc.revoke) {
			t.Errorf("%s: revoke %v, want %v", tc.name, p.Revoke, tc.revoke)
		}
		if got := len(p.Release) == 1; got != tc.release {
			t.Errorf("%s: release %v, want %v", tc.name, got, tc.release)
		}
	}
}
