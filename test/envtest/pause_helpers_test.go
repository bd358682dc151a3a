package envtest_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// pauseWindow is how long a paused object is watched for a change the
// operator must not make: longer than a pass woken by the change
// (an advisory's half-second gathering, a pass, a loaded machine), so a
// careless operator is caught acting within it.
const pauseWindow = 5 * time.Second

// setPaused sets or removes obj's pause annotation.
func setPaused[T client.Object](t *testing.T, obj T, paused bool) {
	t.Helper()
	update(t, obj, func(o T) {
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		if paused {
			a[v1alpha1.AnnotationPauseReconciliation] = "true"
		} else {
			delete(a, v1alpha1.AnnotationPauseReconciliation)
		}
		o.SetAnnotations(a)
	})
}

// pausedCondition is the Paused condition in conds, an error when it is
// not True with reason.
func pausedCondition(conds []metav1.Condition, reason string) error {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionPaused)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
		return fmt.Errorf("Paused condition %+v, want True/%s", c, reason)
	}
	return nil
}

// notPaused is an error while conds still holds a Paused condition.
func notPaused(conds []metav1.Condition) error {
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionPaused); c != nil {
		return fmt.Errorf("still %+v", c)
	}
	return nil
}
