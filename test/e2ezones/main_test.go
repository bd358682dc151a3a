// Package e2ezones_test proves zone placement end to end on a loopback
// cluster of three nodes in three zones (harness in test/e2ekit): the
// zone labels Kubernetes copies from a node onto each pod it binds, the
// servers' tags, the replicas' placement by the real nats-servers, and
// the loss of a zone. A suite of its own: the other suites' one node
// has no zone.
package e2ezones_test

import (
	"os"
	"testing"

	"github.com/kubenats/kubenats/test/e2ekit"
)

// zones are the loopback cluster's: one node in each.
var zones = []string{"a", "b", "c"}

func TestMain(m *testing.M) {
	os.Exit(e2ekit.Run(m, e2ekit.Options{Zones: zones}))
}
