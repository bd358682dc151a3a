// Command controller runs cert-manager's own controllers (the Certificate
// state machine, the CA and self-signed signers, the approver and the issuer
// readiness loops) against a kubeconfig, for the loopback cluster and
// envtest. cert-manager's cmd/controller module is not served by the Go
// module proxy; its controllers are, in the main module, and register
// themselves in init(). This main is the small part of cmd/controller the
// tests need: no leader election (one process per test cluster), no ACME,
// Vault, Venafi, ingress or Gateway shims, no metrics or health servers.
//
// It lives in its own module: cert-manager pins older k8s.io and
// controller-runtime versions than the operator does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each package registers its controller with controller.Known().
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"

	// The issuer types the issuers and clusterissuers controllers set up
	// (their Ready condition); an Issuer of a type not registered here
	// stays not ready with "issuer '<type>' not registered".
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server to run against (required)")
	namespace := flag.String("namespace", "", "watch only this namespace (all when empty)")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager",
		"namespace of the Secrets that ClusterIssuers refer to")
	workers := flag.Int("concurrent-workers", 5, "workers per controller")
	backoffMin := flag.Duration("certificate-request-minimum-backoff-duration", time.Hour,
		"wait after a failed issuance before the next attempt (cert-manager's default is 1h; tests want seconds)")
	backoffMax := flag.Duration("certificate-request-maximum-backoff-duration", 32*time.Hour,
		"longest wait between failed issuance attempts")
	enableOwnerRef := flag.Bool("enable-certificate-owner-ref", false,
		"make each Certificate the owner of its Secret, so deleting the Certificate deletes the Secret")
	readyFile := flag.String("ready-file", "",
		"file written once every informer has synced and the controllers work (a harness waits for it)")
	list := flag.Bool("list", false, "print the controllers this binary runs and exit")
	klog.InitFlags(nil) // -v: 2 is cert-manager's info level, 4 its debug level
	flag.Parse()

	if *list {
		fmt.Println(strings.Join(controllerNames(), "\n"))
		return
	}
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "--kubeconfig is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background(), "cert-manager")

	opts := controller.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		Namespace:          *namespace,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: *clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:                           *enableOwnerRef,
			CertificateRequestMinimumBackoffDuration: *backoffMin,
			CertificateRequestMaximumBackoffDuration: *backoffMax,
		},
	}
	if err := run(ctx, opts, *workers, *readyFile); err != nil {
		klog.ErrorS(err, "cert-manager controller stopped")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// run builds every registered controller, starts the informers they
// registered with, and runs them until ctx ends, as cmd/controller does.
func run(ctx context.Context, opts controller.ContextOptions, workers int, readyFile string) error {
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	// The informer factories are shared by every Context the factory builds;
	// this one is only the handle to start them.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(controller.Known()))
	for _, name := range controllerNames() {
		c, err := controller.Known()[name](factory)
		if err != nil {
			return fmt.Errorf("building controller %s: %w", name, err)
		}
		wg.Go(func() {
			if err := c.Run(workers, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", name, err)
				cancel()
			}
		})
	}
	// Informers start after the controllers registered theirs: a factory
	// starts only the informers asked of it so far.
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	shared.SharedInformerFactory.WaitForCacheSync(ctx.Done())
	shared.KubeSharedInformerFactory.WaitForCacheSync(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.WaitForCacheSync(ctx.Done())
	klog.InfoS("cert-manager controllers running", "controllers", strings.Join(controllerNames(), ","),
		"clusterResourceNamespace", opts.ClusterResourceNamespace)
	if readyFile != "" && ctx.Err() == nil {
		if err := os.WriteFile(readyFile, []byte("ready\n"), 0o644); err != nil {
			cancel()
			wg.Wait()
			return err
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func controllerNames() []string {
	names := make([]string, 0, len(controller.Known()))
	for name := range controller.Known() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
