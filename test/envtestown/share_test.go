package envtestown_test

import (
	"fmt"
	"testing"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/poll"
)

// TestHungClustersOfOneNamespaceHoldOnlyItsShare: two clusters of one
// namespace whose servers take the operator's requests and hold them, and
// an operator of two workers. With a share of one worker per namespace,
// a cluster of another namespace gets its first status while a hung
// server's request is still held: the second hung cluster's pass gave its
// worker back instead of waiting on its server. With a share of two (the
// careless operator: no share at all, as before), both workers wait on
// the hung namespace and the other cluster's first status waits for as
// long as the test holds the requests: the scene can fail. Ran with the
// NatsCluster controller built without namespaceshare.Share (Complete(r)): the
// first subtest failed, the other cluster had no status while both
// requests were held.
func TestHungClustersOfOneNamespaceHoldOnlyItsShare(t *testing.T) {
	t.Run("a share of one", func(t *testing.T) {
		hung, other := namespace(t, "hung"), namespace(t, "other")
		startOperator(t, manager.Options{NatsClusterWorkers: 2, NatsClusterWorkersPerNamespace: 1}, hung, other)
		first, second := twoHungClusters(t, hung)
		awaitEitherHeld(t, first, second)
		c := oneServerCluster(t, other)
		poll.Until(t, wait, func() error {
			if !hasStatus(t, c) {
				return fmt.Errorf("the other namespace's cluster has no status yet")
			}
			return nil
		})
		if !first.holding() && !second.holding() {
			t.Fatal("no hung server's request was held any more when the other cluster's status was seen")
		}
		if first.holding() && second.holding() {
			t.Fatal("both hung clusters held a worker at once under a share of one")
		}
	})
	t.Run("no share holds the other back", func(t *testing.T) {
		hung, other := namespace(t, "hung"), namespace(t, "other")
		startOperator(t, manager.Options{NatsClusterWorkers: 2, NatsClusterWorkersPerNamespace: 2}, hung, other)
		first, second := twoHungClusters(t, hung)
		first.awaitHeld(t)
		second.awaitHeld(t)
		c := oneServerCluster(t, other)
		poll.Holds(t, heldBack, func() error {
			if hasStatus(t, c) {
				return fmt.Errorf("the other cluster got a status while both workers waited on the hung namespace")
			}
			if !first.holding() || !second.holding() {
				return fmt.Errorf("a hung server's request ended before the test let go")
			}
			return nil
		})
		first.release()
		second.release()
		poll.Until(t, wait, func() error {
			if !hasStatus(t, c) {
				return fmt.Errorf("the other cluster has no status after the hung servers answered")
			}
			return nil
		})
	})
}

// twoHungClusters makes clusters a and b in ns, both settled before
// either server hangs: under a share of one, the first hung pass would
// otherwise keep the second cluster from ever getting its StatefulSet.
func twoHungClusters(t *testing.T, ns string) (*holdingMonitor, *holdingMonitor) {
	t.Helper()
	a, stsA := settledCluster(t, ns, "a")
	b, stsB := settledCluster(t, ns, "b")
	return hang(t, a, stsA), hang(t, b, stsB)
}

// awaitEitherHeld waits until the operator's request to one of the hung
// servers is held.
func awaitEitherHeld(t *testing.T, a, b *holdingMonitor) {
	t.Helper()
	poll.Until(t, wait, func() error {
		if a.holding() || b.holding() {
			return nil
		}
		return fmt.Errorf("the operator asked neither hung server")
	})
}
