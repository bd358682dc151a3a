package accountcontroller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestRevocationsGoFirst: with resyncs of five accounts of other
// namespaces already queued, a user's deletion, a creds Secret deleted
// and one whose content changed queue their accounts ahead of them, in
// the order they came; a Secret written again unchanged and a user's spec
// change do not. The queue is controller-runtime's priority queue, the
// one the controller runs with. Careless variant (the plain mapping
// handlers, handler.EnqueueRequestsFromMapFunc, as before): the first
// account out is a resync.
func TestRevocationsGoFirst(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("revocations-first")
	defer q.ShutDown()
	for i := range 5 {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "busy", Name: string(rune('a' + i))}})
	}
	ctx := context.Background()
	users := revocationAware(userAccount, deletionRevokes)
	creds := revocationAware(credsAccount, credsRevoke)

	user := func(account string, deleting bool) *v1alpha1.NatsUser {
		u := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "u-" + account}, Spec: v1alpha1.NatsUserSpec{Account: account}}
		if deleting {
			u.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return u
	}
	secret := func(account, seed string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "creds-" + account, Labels: map[string]string{LabelAccount: account}},
			Data: map[string][]byte{"user.creds": []byte(seed)}}
	}
	users.Update(ctx, event.UpdateEvent{ObjectOld: user("spec", false), ObjectNew: user("spec", false)}, q)
	users.Update(ctx, event.UpdateEvent{ObjectOld: user("deleted-user", false), ObjectNew: user("deleted-user", true)}, q)
	creds.Update(ctx, event.UpdateEvent{ObjectOld: secret("rewritten", "same"), ObjectNew: secret("rewritten", "same")}, q)
	creds.Delete(ctx, event.DeleteEvent{Object: secret("deleted-creds", "s")}, q)
	creds.Update(ctx, event.UpdateEvent{ObjectOld: secret("changed-creds", "old"), ObjectNew: secret("changed-creds", "new")}, q)

	for _, want := range []string{"deleted-user", "deleted-creds", "changed-creds"} {
		req, priority, _ := q.GetWithPriority()
		if req.Name != want || priority != revocationPriority {
			t.Fatalf("next out: %s at priority %d, want %s at %d", req.Name, priority, want, revocationPriority)
		}
	}
	req, priority, _ := q.GetWithPriority()
	if req.Namespace != "busy" || priority != 0 {
		t.Fatalf("after the revocations: %s/%s at priority %d, want the first resync", req.Namespace, req.Name, priority)
	}
}

// TestPassPriority: an account runs ahead next while one of its users is
// being deleted, and at the default priority otherwise (a revocation
// carried does not keep it ahead for ever).
func TestPassPriority(t *testing.T) {
	deleting := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Name: "gone", DeletionTimestamp: &metav1.Time{Time: time.Now()}}}
	live := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Name: "live"}}
	for _, tc := range []struct {
		name  string
		users []*v1alpha1.NatsUser
		want  int
	}{
		{"no user", nil, 0},
		{"live users", []*v1alpha1.NatsUser{live}, 0},
		{"a user being deleted", []*v1alpha1.NatsUser{live, deleting}, revocationPriority},
	} {
		if got := passPriority(tc.users); got != tc.want {
			t.Errorf("%s: passPriority = %d, want %d", tc.name, got, tc.want)
		}
	}
}
