// Package envtest_test runs the operator against a real kube-apiserver and
// etcd (built by hack/build-k8s-bins.sh into bin/k8s). There is no
// controller manager and no kubelet here: pods never run, so tests that need
// a StatefulSet's status write it themselves, as the StatefulSet controller
// would.
package envtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/rbac"
)

var (
	// k8s talks to the API server directly, with no cache, as a user would.
	k8s client.Client
	cfg *rest.Config
	// operatorCfg is how the operator reaches the API server: as its
	// ServiceAccount.
	operatorCfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	inprocess.SetTestLogger()
	root := inprocess.RepoRoot()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s"),
	}
	rbac.EnforceOwnerReferences(env)
	var err error
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
	// The operator runs as its own ServiceAccount with the shipped RBAC:
	// a permission missing from config/rbac fails the tests that need it.
	if err := rbac.Install(context.Background(), k8s, root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	operatorCfg = rbac.Config(cfg)
	stop, err := inprocess.Start(ctrl.SetupSignalHandler(), operatorCfg, manager.Options{
		MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		Dialer: jetstream.DialerFunc(testDialer),
		// connection.servers of the tests name nats-servers on 127.0.0.1.
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
