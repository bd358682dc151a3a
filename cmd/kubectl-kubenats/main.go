// Command kubectl-kubenats is the kubectl plugin of kubenats: put it on
// PATH and run `kubectl kubenats`. What it does is package
// internal/kubectlplugin; this is its connection to a cluster.
package main

import (
	"context"
	"os"
	"os/signal"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/kubectlplugin"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := kubectlplugin.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, connect, version)
	stop()
	os.Exit(code)
}

// connect reads the kubeconfig as kubectl does ($KUBECONFIG, then
// ~/.kube/config, or the file and context given) and says the context's
// namespace.
func connect(kubeconfig, kubeContext string) (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	rest, err := cfg.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cfg.Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(rest, client.Options{Scheme: kubectlplugin.Scheme()})
	return c, ns, err
}
