// Package envtest_test runs the operator against a real kube-apiserver and
// etcd (built by hack/build-k8s-bins.sh into bin/k8s). There is no
// controller manager and no kubelet here: pods never run, so tests that need
// a StatefulSet's status write it themselves, as the StatefulSet controller
// would.
package envtest_test

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
)

var (
	// k8s talks to the API server directly, with no cache, as a user would.
	k8s client.Client
	cfg *rest.Config
	// operatorCfg is how the operator reaches the API server: as its
	// ServiceAccount.
	operatorCfg *rest.Config
)

// TestMain runs the operator as its own ServiceAccount with the shipped
// RBAC and admission policies: a permission missing from config/rbac fails
// the tests that need it.
func TestMain(m *testing.M) {
	os.Exit(inprocess.RunEnvtest(m.Run, inprocess.EnvtestOptions{
		Operator: manager.Options{
			Dialer: jetstream.DialerFunc(testDialer),
			// connection.servers of the tests name nats-servers on 127.0.0.1.
			AllowLocalTargets: true,
			// natscluster_issuer_policy_test.go: one ClusterIssuer allowed.
			AllowedClusterIssuers: []string{allowedClusterIssuer},
		},
		Ready: func(e *inprocess.Envtest) { k8s, cfg, operatorCfg = e.Client, e.Config, e.OperatorConfig },
	}))
}
