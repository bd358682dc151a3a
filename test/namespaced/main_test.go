// Package namespaced_test runs the operator as config/namespaced installs
// it: confined by --watch-namespaces to two namespaces, as its
// ServiceAccount, with RoleBindings in those namespaces and nothing
// cluster-wide but what that overlay grants. It proves the mode works with
// that RBAC alone, and that nothing outside the two namespaces is touched.
package namespaced_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/rbac"
)

// The watched namespaces (the overlay's team-a and team-b) and one the
// operator must leave alone.
const (
	watchedA  = "ns-a"
	watchedB  = "ns-b"
	unwatched = "ns-c"
)

var (
	k8s         client.Client
	operatorCfg *rest.Config
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	inprocess.SetTestLogger()
	root := inprocess.RepoRoot()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s"),
	}
	rbac.EnforceOwnerReferences(env)
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest (run `make test-bins` first): %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	for _, ns := range []string{watchedA, watchedB, unwatched} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := rbac.InstallNamespaced(ctx, k8s, root, map[string]string{"team-a": watchedA, "team-b": watchedB}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	operatorCfg = rbac.Config(cfg)
	stop, err := inprocess.Start(ctrl.SetupSignalHandler(), operatorCfg, manager.Options{
		MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		WatchNamespaces: []string{watchedA, watchedB},
		// The suite's nats-server runs on 127.0.0.1.
		AllowLocalTargets: true,
	})
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
