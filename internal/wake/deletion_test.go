package wake

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestDeletionStartedPassesOnlyTheFirstMark: the update that sets the
// deletion timestamp passes; one before it, or a later one of an object
// already being deleted (a finalizer removed), does not. Careless variant
// watched failing: passing every update of a deleted object (the second
// case passed).
func TestDeletionStartedPassesOnlyTheFirstMark(t *testing.T) {
	now := metav1.Now()
	live, deleted := &v1alpha1.Backup{}, &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	for _, tc := range []struct {
		name     string
		old, new *v1alpha1.Backup
		want     bool
	}{
		{"deletion starts", live, deleted, true},
		{"already being deleted", deleted, deleted, false},
		{"no deletion", live, live, false},
	} {
		if got := (DeletionStarted{}).Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
