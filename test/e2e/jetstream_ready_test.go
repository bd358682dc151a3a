package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// reasonSynced is the Ready reason of a JetStream resource whose server
// object matches its spec (the controller's constant is unexported).
const reasonSynced = "Synced"

// waitSynced waits until the operator reports obj Ready, reason Synced, for
// its current generation, and leaves the latest obj behind.
func waitSynced(t *testing.T, obj v1alpha1.JetStreamObject, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		st := obj.GetJetStreamStatus()
		ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != reasonSynced {
			return fmt.Errorf("%T %s: Ready condition %+v, want True, reason %s", obj, obj.GetName(), ready, reasonSynced)
		}
		if st.ObservedGeneration != obj.GetGeneration() || ready.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("%T %s: status describes generation %d (condition %d), the spec is at %d",
				obj, obj.GetName(), st.ObservedGeneration, ready.ObservedGeneration, obj.GetGeneration())
		}
		return nil
	})
}
