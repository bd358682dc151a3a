package inprocess

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RunEnvtestServing is the TestMain of a suite that differs from the
// operator's own envtest suite only in the CRDs its API server serves
// besides the operator's (another project's kinds, such as Istio's or the
// Prometheus Operator's): the shipped RBAC and admission policies, the
// operator as its ServiceAccount, and the administrator's client kept in
// *k8s for the tests. crds names each file or directory, or returns an
// error that fails the suite before anything starts (a CRD file that must
// first be located).
func RunEnvtestServing(run func() int, k8s *client.Client, crds func() ([]string, error)) int {
	paths, err := crds()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return RunEnvtest(run, EnvtestOptions{
		CRDPaths: paths,
		Ready:    func(e *Envtest) { *k8s = e.Client },
	})
}

// CRDFiles is crds for CRDs kept in the suite's own directory.
func CRDFiles(paths ...string) func() ([]string, error) {
	return func() ([]string, error) { return paths, nil }
}

// IstioCRDs is crds for Istio's CRDs in the Go module cache, for the
// istio.io/api version the main go.mod requires (bin/istio/crds holds
// hack/istioinject's pin, which may be another): the same version whose
// types the operator uses.
func IstioCRDs() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "istio.io/api").Output()
	if err != nil {
		return nil, fmt.Errorf("locating istio.io/api: %w", err)
	}
	return []string{filepath.Join(strings.TrimSpace(string(out)), "kubernetes", "customresourcedefinitions.gen.yaml")}, nil
}
