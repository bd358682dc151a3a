// Package envtestmesh_test runs the operator against a real kube-apiserver
// and etcd that serve Istio's CRDs (read from the istio.io/api module, the
// same version whose types the operator uses), as its ServiceAccount with
// the shipped RBAC. The envtest suite proper runs without them, for the
// operator without Istio.
package envtestmesh_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/rbac"
)

var (
	k8s client.Client
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	inprocess.SetTestLogger()
	root := inprocess.RepoRoot()
	istioCRDs, err := istioCRDFile()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases"), istioCRDs},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s"),
	}
	rbac.EnforceOwnerReferences(env)
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest (run `make test-bins` first): %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := admission.Install(context.Background(), k8s, root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := rbac.Install(context.Background(), k8s, root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop, err := inprocess.Start(ctrl.SetupSignalHandler(), rbac.Config(cfg), manager.Options{MetricsBindAddress: "0", HealthProbeBindAddress: "0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return code
}

// istioCRDFile is Istio's CRDs in the module cache, for the istio.io/api
// version go.mod requires.
func istioCRDFile() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "istio.io/api").Output()
	if err != nil {
		return "", fmt.Errorf("locating istio.io/api: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "kubernetes", "customresourcedefinitions.gen.yaml"), nil
}
