// Package envtestown_test runs operators of its tests' own making against
// a real kube-apiserver and etcd: each test starts the operator it needs
// (one worker or the shipped count, a route certificate due seconds after
// it is issued), confined to its namespaces, which the envtest suite's
// one shared operator cannot give. The suite's own operator is confined to
// a namespace no test uses.
package envtestown_test

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
)

var (
	// k8s talks to the API server directly, with no cache, as a user would.
	k8s client.Client
	// operatorCfg is how the tests' operators reach the API server: as the
	// operator's ServiceAccount, with the shipped RBAC.
	operatorCfg *rest.Config
)

// idleNamespace is where the suite's own operator looks: nowhere a test
// creates anything.
const idleNamespace = "kubenats-envtestown-idle"

func TestMain(m *testing.M) {
	os.Exit(inprocess.RunEnvtest(m.Run, inprocess.EnvtestOptions{
		Operator: manager.Options{WatchNamespaces: []string{idleNamespace}},
		Ready:    func(e *inprocess.Envtest) { k8s, operatorCfg = e.Client, e.OperatorConfig },
	}))
}
