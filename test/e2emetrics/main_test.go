// Package e2emetrics_test proves the metrics with a real Prometheus on the
// loopback cluster (harness in test/e2ekit): it scrapes the servers'
// metrics containers through the PodMonitors render makes and the
// operator's own endpoint, and the tests ask it with PromQL, as a user
// would.
package e2emetrics_test

import (
	"os"
	"testing"

	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/loopback"
)

func TestMain(m *testing.M) {
	os.Exit(e2ekit.Run(m, e2ekit.Options{Prometheus: true, OperatorMetrics: true, CertManager: true, Istio: true,
		Started: func(c *loopback.Cluster) { cluster = c }}))
}

// cluster is the suite's loopback cluster.
var cluster *loopback.Cluster
