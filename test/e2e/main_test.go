// Package e2e_test runs the NatsCluster's life against a loopback cluster
// (test/loopback, harness in test/e2ekit): formation, clients, TLS,
// rollouts, scale-downs, reloads, the mesh, metrics, each with real
// nats-servers on one machine and no container runtime.
//
// Most tests run one after another: they time stalls and restarts, and a
// test that restarts the operator must be alone. A few long ones that
// mostly wait (for nats-server's five minutes before a removed peer may
// rejoin, for a store to fill, for a broken mesh to be rolled back) call
// e2ekit.Parallel: they run after the sequential ones, three at a time
// (Options.Parallel; the machine has two cores, and these tests mostly
// wait), longest first, so that the suite stays within its time budget.
package e2e_test

import (
	"os"
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/loopback"
)

func TestMain(m *testing.M) {
	os.Exit(e2ekit.Run(m, e2ekit.Options{CertManager: true, Istio: true, Prometheus: true, Parallel: 3,
		Started: func(c *loopback.Cluster) { cluster = c },
		Operator: func(o *manager.Options) {
			o.MeshRollbackAfter = meshRollbackAfter
			o.MeshPushAllowance = meshPushAllowance
			o.SigningKeyGrace = signingKeyGrace
		}}))
}

// signingKeyGrace keeps a NatsAccount's rotated-out signing key for a few
// seconds here: long enough to see a client stay connected through the
// re-issue, short enough not to wait ten minutes.
const signingKeyGrace = 3 * time.Second
