// Package e2etopology_test proves leafnodes and gateways end to end on the
// loopback cluster (harness in test/e2ekit): NatsClusters the operator
// runs, nats-servers outside the cluster started by the tests as plain
// processes, real clients. Few clusters, single servers where the proof
// allows, so that the suite stays short beside test/e2e.
package e2etopology_test

import (
	"os"
	"testing"

	"github.com/kubenats/kubenats/test/e2ekit"
)

func TestMain(m *testing.M) {
	os.Exit(e2ekit.Run(m, e2ekit.Options{}))
}
