package helm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/rbac"
)

// controlPlane starts a real kube-apiserver and etcd with nothing of the
// operator in it (the chart installs the CRDs), the hardened clusters'
// owner-reference enforcement on as in the other envtest suites. The
// binaries are bin/k8s's (make test-bins), or KUBEBUILDER_ASSETS's.
func controlPlane(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	rbac.EnforceOwnerReferences(env)
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (run `make test-bins` first): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := manager.Scheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c
}

// helmConfig is Helm's action configuration for the API server of cfg, in
// namespace ns, keeping its releases in Secrets as the helm CLI does. Helm
// reaches a cluster through a kubeconfig, so one is written for it.
func helmConfig(t *testing.T, cfg *rest.Config, ns string) *action.Configuration {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: ns}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &path, &ns
	hc := action.NewConfiguration()
	if err := hc.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	return hc
}

func helmInstall(t *testing.T, hc *action.Configuration, ns string, ch *chart.Chart, vals map[string]any) {
	t.Helper()
	i := action.NewInstall(hc)
	i.ReleaseName, i.Namespace, i.CreateNamespace = "kubenats", ns, true
	// No kubelet runs here: the operator's pod never starts, so Helm
	// waits for nothing (the operator runs in this process instead).
	i.WaitStrategy, i.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := i.RunWithContext(context.Background(), ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
}

func helmUpgrade(t *testing.T, hc *action.Configuration, ns string, ch *chart.Chart, vals map[string]any) {
	t.Helper()
	u := action.NewUpgrade(hc)
	u.Namespace = ns
	u.WaitStrategy, u.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := u.RunWithContext(context.Background(), "kubenats", ch, vals); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
}

func helmUninstall(t *testing.T, hc *action.Configuration) {
	t.Helper()
	u := action.NewUninstall(hc)
	u.WaitStrategy, u.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := u.Run("kubenats"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
}

// eventually polls check until it returns nil, failing the test with its
// last error after timeout.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// throughout checks check every 200ms for window: a negative claim (this
// was not deleted) holds over a stretch of time, not at one read.
func throughout(t *testing.T, window time.Duration, check func() error) {
	t.Helper()
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := check(); err != nil {
			t.Fatal(err)
		}
	}
}
