// Command chartinstall installs or uninstalls the kubenats chart with
// Helm's own library, as `helm install` and `helm uninstall` would, for
// the real-node suite (test/realnode), which has no helm binary:
//
//	chartinstall -kubeconfig F -namespace NS -chart DIR [-values JSON] install
//	chartinstall -kubeconfig F -namespace NS uninstall
//
// The release is named kubenats; Helm keeps it in Secrets of NS.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

const release = "kubenats"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig")
	ns := flag.String("namespace", "kubenats-system", "the release's namespace")
	chartDir := flag.String("chart", "", "the chart's directory (install)")
	values := flag.String("values", "{}", "the values, as JSON (install)")
	flag.Parse()
	if err := run(*kubeconfig, *ns, *chartDir, *values, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "chartinstall:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, ns, chartDir, values string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want one command, install or uninstall")
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	hc := action.NewConfiguration()
	if err := hc.Init(flags, ns, "secret"); err != nil {
		return err
	}
	switch args[0] {
	case "install":
		ch, err := loader.LoadDir(chartDir)
		if err != nil {
			return err
		}
		vals := map[string]any{}
		if err := json.Unmarshal([]byte(values), &vals); err != nil {
			return fmt.Errorf("values: %w", err)
		}
		i := action.NewInstall(hc)
		i.ReleaseName, i.Namespace, i.CreateNamespace = release, ns, true
		// The suite waits for what it checks itself.
		i.WaitStrategy, i.Timeout = kube.HookOnlyStrategy, 2*time.Minute
		_, err = i.RunWithContext(context.Background(), ch, vals)
		return err
	case "uninstall":
		u := action.NewUninstall(hc)
		u.WaitStrategy, u.Timeout = kube.HookOnlyStrategy, 2*time.Minute
		_, err := u.Run(release)
		return err
	}
	return fmt.Errorf("unknown command %q", args[0])
}
