// Package envtestmesh_test runs the operator against a real kube-apiserver
// and etcd that serve Istio's CRDs (read from the istio.io/api module, the
// same version whose types the operator uses), as its ServiceAccount with
// the shipped RBAC. The envtest suite proper runs without them, for the
// operator without Istio.
package envtestmesh_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/inprocess"
)

var k8s client.Client

func TestMain(m *testing.M) {
	istioCRDs, err := istioCRDFile()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(inprocess.RunEnvtest(m.Run, inprocess.EnvtestOptions{
		CRDPaths: []string{istioCRDs},
		Ready:    func(e *inprocess.Envtest) { k8s = e.Client },
	}))
}

// istioCRDFile is Istio's CRDs in the module cache, for the istio.io/api
// version go.mod requires (bin/istio/crds holds hack/istioinject's pin,
// which may be another).
func istioCRDFile() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "istio.io/api").Output()
	if err != nil {
		return "", fmt.Errorf("locating istio.io/api: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "kubernetes", "customresourcedefinitions.gen.yaml"), nil
}
