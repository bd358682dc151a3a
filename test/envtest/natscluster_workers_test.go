package envtest_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// One tenant's cluster whose server hangs holds no other cluster back: while
// a pass of the hung cluster waits on its server (each request bounded by
// 3 s), a cluster created meanwhile gets its first status at once. With a
// single worker it would wait for that pass to end, seconds later.
func TestAHungClusterHoldsNoOtherBack(t *testing.T) {
	hung := oneServerCluster(t)
	serversReady(t, hung)
	ip := loopbackNet() + "1"
	mon := stallableMonitor(t, ip)
	mon.stalled.Store(true)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: hung.Namespace, Name: hung.Name}}
	get(t, sts)
	serverPod(t, hung, "nats-0", "r1", ip, sts)
	eventually(t, wait, func() error {
		if mon.held.Load() == 0 {
			return fmt.Errorf("no pass of the hung cluster waits on its server yet")
		}
		return nil
	})

	other := oneServerCluster(t)
	created := time.Now()
	// Well inside the 3 s the hung cluster's pass waits on each request,
	// and far beyond what a pass of a cluster without servers takes.
	const bound = 1500 * time.Millisecond
	eventually(t, 2*bound, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(other), other); err != nil {
			return err
		}
		if meta.FindStatusCondition(other.Status.Conditions, v1alpha1.ConditionReady) == nil {
			return fmt.Errorf("no status yet")
		}
		return nil
	})
	if took := time.Since(created); took > bound {
		t.Fatalf("the other cluster's first status came %s after it was created, while a hung cluster's pass waited: the passes are not concurrent", took.Round(time.Millisecond))
	} else {
		t.Logf("the other cluster's first status came %s after it was created, while the hung cluster's pass waited on its server", took.Round(time.Millisecond))
	}
}
