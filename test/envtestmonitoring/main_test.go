// Package envtestmonitoring_test runs the operator against a real
// kube-apiserver and etcd that serve the Prometheus Operator's kinds
// (testdata/monitoring-crds.yaml), as its ServiceAccount with the shipped
// RBAC. The envtest suite proper runs without them, for the operator
// without the Prometheus Operator.
package envtestmonitoring_test

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/inprocess"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(inprocess.RunEnvtestServing(m.Run, &k8s, inprocess.CRDFiles("testdata/monitoring-crds.yaml")))
}
