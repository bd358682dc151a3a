package envtest_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// One tenant's cluster whose server hangs holds no other back: while a pass
// of the hung cluster waits on its server (the operator gives up on a
// request after 3 s), a cluster created meanwhile gets its first status
// before that very request is given up. With a single worker it cannot:
// the worker is busy with the hung cluster's pass until then, and longer.
func TestAHungClusterHoldsNoOtherBack(t *testing.T) {
	_, mon := hungServerCluster(t)
	var held int
	eventually(t, wait, func() error {
		if held = mon.oldestHeld(); held == 0 {
			return fmt.Errorf("no pass of the hung cluster waits on its server yet")
		}
		return nil
	})

	other := oneServerCluster(t)
	created := time.Now()
	var seen time.Time
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(other), other); err != nil {
			return err
		}
		if meta.FindStatusCondition(other.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return fmt.Errorf("no status yet")
		}
		seen = time.Now()
		return nil
	})
	released := mon.releasedAt(held)
	if !released.IsZero() && released.Before(seen) {
		t.Fatalf("the other cluster's first status was seen %s after its creation, %s after the hung cluster's request was given up: the passes are not concurrent",
			seen.Sub(created).Round(time.Millisecond), seen.Sub(released).Round(time.Millisecond))
	}
	t.Logf("the other cluster's first status came %s after it was created, while the hung cluster's pass still waited on its server",
		seen.Sub(created).Round(time.Millisecond))
}
