// Package envtestmesh_test runs the operator against a real kube-apiserver
// and etcd that serve Istio's CRDs (read from the istio.io/api module, the
// same version whose types the operator uses), as its ServiceAccount with
// the shipped RBAC. The envtest suite proper runs without them, for the
// operator without Istio.
package envtestmesh_test

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/inprocess"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(inprocess.RunEnvtestServing(m.Run, &k8s, inprocess.IstioCRDs))
}
