package inprocess

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/rbac"
)

// Envtest is a real kube-apiserver and etcd (bin/k8s) serving the
// operator's CRDs, with the operator running in this process as its
// ServiceAccount: what an envtest suite's tests reach.
type Envtest struct {
	// Root is the repository's root directory.
	Root string
	// Config reaches the API server as its administrator.
	Config *rest.Config
	// Client talks to the API server as its administrator, directly, with
	// no cache, as a user would.
	Client client.Client
	// OperatorConfig is how the operator reaches the API server: as its
	// ServiceAccount (rbac.Config).
	OperatorConfig *rest.Config
}

// EnvtestOptions are what one envtest suite sets up differently.
type EnvtestOptions struct {
	// CRDPaths are CRD files or directories served besides the operator's
	// own (config/crd/bases).
	CRDPaths []string
	// Install prepares the cluster before the operator starts. Nil
	// installs what dist/install.yaml would: the admission policies, the
	// shipped cluster-wide RBAC (InstallShipped) and, for an operator
	// watching every namespace, the validating webhook, which it then
	// serves.
	Install func(ctx context.Context, e *Envtest) error
	// Operator are the manager's options; its metrics and health endpoints
	// are turned off on top, as a test process runs no probes.
	Operator manager.Options
	// Ready is called once the operator's caches are synced, before the
	// tests run: the suite keeps what its tests use of e.
	Ready func(e *Envtest)
}

// RunEnvtest starts the control plane, prepares it, starts the operator
// in it, calls run (a suite's m.Run) and stops everything again; it
// returns the suite's exit code. A failed start is said on stderr and is
// exit code 1. It may run once per process (it takes the signal handler).
func RunEnvtest(run func() int, o EnvtestOptions) int {
	SetTestLogger()
	e := &Envtest{Root: RepoRoot()}
	env := &envtest.Environment{
		CRDDirectoryPaths:     append([]string{filepath.Join(e.Root, "config", "crd", "bases")}, o.CRDPaths...),
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: filepath.Join(e.Root, "bin", "k8s"),
	}
	rbac.EnforceOwnerReferences(env)
	var err error
	if e.Config, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest (run `make test-bins` first): %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if e.Client, err = client.New(e.Config, client.Options{Scheme: manager.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := o.Operator
	install := o.Install
	if install == nil {
		install = InstallShipped
	}
	if o.Install == nil && len(opts.WatchNamespaces) == 0 {
		// What dist/install.yaml installs, the validating webhook with it,
		// served by the operator on a port of this process. (An operator
		// confined to namespaces has none, as config/namespaced.)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		opts.WebhookListener, opts.Namespace, opts.WebhookCertNames = ln, rbac.Namespace, []string{"127.0.0.1"}
		install = func(ctx context.Context, e *Envtest) error {
			if err := InstallShipped(ctx, e); err != nil {
				return err
			}
			return admission.InstallWebhook(ctx, e.Client, e.Root, "https://"+ln.Addr().String())
		}
	}
	if err := install(context.Background(), e); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e.OperatorConfig = rbac.Config(e.Config)
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	stop, err := Start(ctrl.SetupSignalHandler(), e.OperatorConfig, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if o.Ready != nil {
		o.Ready(e)
	}
	code := run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return code
}

// InstallShipped installs the admission policies of config/admission and
// the operator's ServiceAccount with the shipped cluster-wide RBAC of
// config/rbac: a permission missing there fails the tests that need it.
func InstallShipped(ctx context.Context, e *Envtest) error {
	if err := admission.Install(ctx, e.Client, e.Root); err != nil {
		return err
	}
	return rbac.Install(ctx, e.Client, e.Root)
}
