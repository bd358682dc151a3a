// Command cachefloor is the memory floor of the JetStream benchmark: a
// controller-runtime manager that caches the five kubenats kinds, as the
// operator does (managed fields stripped), and does nothing else. Its peak
// resident memory once its caches hold the benchmark's objects is what any
// operator built on controller-runtime and client-go pays before it does
// any work: the operator's peak is reported against it.
//
// It prints "synced" once every cache has listed, then waits to be killed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrl "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	flag.Parse()
	if err := run(*kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "cachefloor:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.New(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, obj := range []client.Object{&v1alpha1.Stream{}, &v1alpha1.Consumer{}, &v1alpha1.KeyValue{}, &v1alpha1.ObjectStore{}, &v1alpha1.NatsCluster{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			fmt.Println("synced")
		}
	}()
	return mgr.Start(ctx)
}
