package status

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestLeadersAsLastCounted: a pass that counted the leaders writes its
// count; one that did not (the cluster not settled, or no new occasion)
// keeps the count before; with balanceLeaders off there is none.
// Careless status it catches: one that drops the count on every pass
// that did not count (the status would flicker between passes).
func TestLeadersAsLastCounted(t *testing.T) {
	before := []v1alpha1.ServerLeaders{{Server: "nats-0", Groups: 6}}
	counted := []v1alpha1.ServerLeaders{{Server: "nats-0", Groups: 2}, {Server: "nats-1", Groups: 2}, {Server: "nats-2", Groups: 2}}
	c := natsCluster(3, func(c *v1alpha1.NatsCluster) { c.Status.Leaders = before })
	if got := NatsCluster(ClusterObservation{Cluster: c, Leaders: counted}).Leaders; !reflect.DeepEqual(got, counted) {
		t.Errorf("counted: %v", got)
	}
	if got := NatsCluster(ClusterObservation{Cluster: c}).Leaders; !reflect.DeepEqual(got, before) {
		t.Errorf("not counted: %v, want the count before", got)
	}
	off := natsCluster(3, func(c *v1alpha1.NatsCluster) {
		c.Status.Leaders = before
		c.Spec.JetStream.BalanceLeaders = ptr.To(false)
	})
	if got := NatsCluster(ClusterObservation{Cluster: off}).Leaders; got != nil {
		t.Errorf("balanceLeaders off: %v, want none", got)
	}
}
