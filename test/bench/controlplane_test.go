package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/inprocess"
)

// controlPlane starts kube-apiserver and etcd with kubenats' CRDs and
// returns a client, its config, a kubeconfig file for the operator process,
// and the repository root.
func controlPlane(b testing.TB) (client.Client, *rest.Config, string, string) {
	b.Helper()
	root := inprocess.RepoRoot()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s"),
	}
	// Profiling lets KUBENATS_BENCH_APISERVER_PROFILE look inside.
	env.ControlPlane.GetAPIServer().Configure().Set("profiling", "true")
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		b.Fatal(err)
	}
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = -1, 0 // the creators must not be the bottleneck
	k, err := client.New(fast, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	// The policies ship with the CRDs, and one of them spares the operator
	// a write per resource: both floor and run are measured with them.
	if err := admission.Install(context.Background(), k, root); err != nil {
		b.Fatal(err)
	}
	return k, fast, path, root
}

// operatorBinary builds bin/kubenats, the binary users run.
func operatorBinary(b testing.TB, root string) string {
	b.Helper()
	out := filepath.Join(root, "bin", "kubenats")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/kubenats")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}
