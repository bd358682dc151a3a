package status

import (
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestOOMKilledServersAreNamed: a server the kernel killed for its memory
// limit makes Ready say OOMKilled with what happened, ahead of a count of
// ready servers. Careless status it catches: one that reports the
// StatefulSet's count ("2 of 3 servers ready"), which says nothing a user
// can act on.
func TestOOMKilledServersAreNamed(t *testing.T) {
	msg := "nats-1: container nats was killed for going over its memory limit of 12Mi (OOMKilled, restarted 3 times)"
	st := NatsCluster(ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(3, 2), OOMKilled: []string{msg}})
	ready := condition(t, st, v1alpha1.ConditionReady)
	if ready.Reason != v1alpha1.ReasonOOMKilled || !strings.Contains(ready.Message, msg) {
		t.Fatalf("Ready = %s %q, want %s naming the server", ready.Reason, ready.Message, v1alpha1.ReasonOOMKilled)
	}
}
