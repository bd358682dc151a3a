package accountcontroller

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
)

// TestRotationWaitsForEveryUser: the previous key may go only when every
// user holds creds of the current one, and the condition counts them.
// Careless variants caught: a user whose creds failed to write counted as
// re-issued (it would be locked out at the drop), a name conflict ignored.
func TestRotationWaitsForEveryUser(t *testing.T) {
	user := func(uid string) *v1alpha1.NatsUser {
		return &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid}}
	}
	p := userPlan{Issue: []issue{{User: user("a")}, {User: user("b")}}, Current: []current{{User: user("c")}}}
	ok := map[types.UID]issued{"a": {}, "b": {}}
	failed := map[types.UID]issued{"a": {}, "b": {Err: errors.New("conflict")}}
	if !allReissued(p, ok) {
		t.Error("every user issued: not all re-issued")
	}
	if allReissued(p, failed) {
		t.Error("a failed issue counted as re-issued")
	}
	if allReissued(userPlan{Conflict: []*v1alpha1.NatsUser{user("d")}}, nil) {
		t.Error("a name conflict counted as re-issued")
	}

	keys := accounts.AccountKeys{PreviousSigningKey: "AOLD", Rotation: accounts.Rotation{For: "1", PreviousUntil: 1000}}
	v := rotationVerdict(keys, p, failed)
	if v == nil || v.Status != metav1.ConditionFalse || !strings.HasPrefix(v.Message, "2 of 3 users") {
		t.Fatalf("verdict while reissuing: %+v", v)
	}
	keys.PreviousSigningKey = ""
	if v := rotationVerdict(keys, p, ok); v == nil || v.Status != metav1.ConditionTrue {
		t.Fatalf("verdict once dropped: %+v", v)
	}
	if v := rotationVerdict(accounts.AccountKeys{}, p, ok); v != nil {
		t.Fatalf("a condition before any rotation: %+v", v)
	}
	if d := nextPass(accounts.AccountKeys{PreviousSigningKey: "AOLD", Rotation: accounts.Rotation{PreviousUntil: 1003}}, time.Unix(1000, 0)); d != 4*time.Second {
		t.Fatalf("next pass %s, want at the end of the grace", d)
	}
}
