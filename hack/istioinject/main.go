// Command istioinject is Istio's sidecar injector, as istiod serves it, for
// the loopback cluster: Istio's own webhook (istio.io/istio/pkg/kube/inject)
// behind an HTTPS listener, registered with the API server as a mutating
// admission webhook by the harness (test/loopback/istio.go).
//
// Its configuration is what `istioctl install` (profile default) would put
// in the istio-sidecar-injector and istio ConfigMaps: rendered here by
// Istio's own installer (operator/pkg/render) from the charts of the
// istio.io/istio module, the injection template
// (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml)
// included. Nothing of Istio's is kept in this repository.
//
// The webhook reads the cluster's Nodes, as istiod does, to choose native
// sidecars (Kubernetes 1.33 and later) or a classic istio-proxy container.
//
// It lives in its own module: Istio pins other k8s.io versions than the
// operator does.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	meshconfig "istio.io/api/mesh/v1alpha1"
	"istio.io/istio/operator/pkg/manifest"
	"istio.io/istio/operator/pkg/render"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/multicluster"
)

// clusterID is istiod's default cluster name.
const clusterID = "Kubernetes"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server whose Nodes decide native sidecars (required)")
	listen := flag.String("listen", "127.0.0.1:0", "address of the HTTPS listener")
	certFile := flag.String("tls-cert", "", "serving certificate (PEM, required)")
	keyFile := flag.String("tls-key", "", "serving key (PEM, required)")
	readyFile := flag.String("ready-file", "", "written with the listener's address once the webhook serves")
	webhookFile := flag.String("webhook-config", "", "write the MutatingWebhookConfiguration istioctl would install (JSON) here, and exit")
	dump := flag.Bool("print-config", false, "print the injector's rendered config and values, and exit")
	var sets multiFlag
	flag.Var(&sets, "set", "an istioctl install --set value (repeatable), over profile=default")
	flag.Parse()

	r, err := renderInjectorConfig(sets)
	if err != nil {
		fail("rendering Istio's injector configuration: %v", err)
	}
	cfg, values, meshCfg := r.config, r.values, r.mesh
	if *webhookFile != "" {
		if err := os.WriteFile(*webhookFile, r.webhook, 0o644); err != nil {
			fail("%v", err)
		}
		return
	}
	if *dump {
		fmt.Printf("# config\n%s\n# values\n%s\n", cfg, values)
		return
	}
	if *kubeconfig == "" || *certFile == "" || *keyFile == "" {
		fail("--kubeconfig, --tls-cert and --tls-key are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *listen, *certFile, *keyFile, *readyFile, cfg, values, meshCfg); err != nil {
		fail("%v", err)
	}
}

// rendered is what istiod's injector reads, and how it is registered.
type rendered struct {
	config, values string // the istio-sidecar-injector ConfigMap
	mesh           *meshconfig.MeshConfig
	webhook        []byte // the MutatingWebhookConfiguration, JSON
}

// renderInjectorConfig renders the default profile with Istio's installer:
// the istio-sidecar-injector ConfigMap's config and values, the mesh
// config of the istio ConfigMap, and the injector's
// MutatingWebhookConfiguration.
func renderInjectorConfig(sets []string) (r rendered, err error) {
	flags := append([]string{"profile=default"}, sets...)
	manifests, _, err := render.GenerateManifest(nil, flags, false, nil, nil)
	if err != nil {
		return r, err
	}
	r.mesh = mesh.DefaultMeshConfig()
	for _, set := range manifests {
		for _, m := range set.Manifests {
			switch {
			case m.GetKind() == "ConfigMap" && m.GetName() == "istio-sidecar-injector":
				r.config, r.values = dataOf(m, "config"), dataOf(m, "values")
			case m.GetKind() == "ConfigMap" && m.GetName() == "istio":
				if r.mesh, err = mesh.ApplyMeshConfig(dataOf(m, "mesh"), mesh.DefaultMeshConfig()); err != nil {
					return r, fmt.Errorf("the istio ConfigMap's mesh: %w", err)
				}
			case m.GetKind() == "MutatingWebhookConfiguration" && m.GetName() == "istio-sidecar-injector":
				if r.webhook, err = m.MarshalJSON(); err != nil {
					return r, err
				}
			}
		}
	}
	if r.config == "" || r.values == "" || r.webhook == nil {
		return r, errors.New("the render lacks the istio-sidecar-injector ConfigMap or MutatingWebhookConfiguration")
	}
	return r, nil
}

func dataOf(m manifest.Manifest, key string) string {
	data, _ := m.Object["data"].(map[string]any)
	s, _ := data[key].(string)
	return s
}

func run(ctx context.Context, kubeconfig, listen, certFile, keyFile, readyFile, cfg, values string, meshCfg *meshconfig.MeshConfig) error {
	// The webhook's watcher reads its config from files, as istiod's does
	// from the mounted ConfigMap.
	dir, err := os.MkdirTemp("", "istioinject-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	configPath, valuesPath := dir+"/config", dir+"/values"
	if err := os.WriteFile(configPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(valuesPath, []byte(values), 0o600); err != nil {
		return err
	}
	watcher, err := inject.NewFileWatcher(configPath, valuesPath)
	if err != nil {
		return err
	}

	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kube.NewClient(kube.NewClientConfigForRestConfig(restConfig), clusterID)
	if err != nil {
		return err
	}

	// ProxyConfig resources: none (the pod's proxy.istio.io/config
	// annotation still applies, over the mesh's defaultConfig).
	store := model.NewFakeStore()
	env := &model.Environment{Watcher: meshwatcher.NewTestWatcher(meshCfg), ConfigStore: store}
	env.SetPushContext(&model.PushContext{ProxyConfigs: model.GetProxyConfigs(store, meshCfg)})

	clusters := multicluster.NewFakeController()
	mux := http.NewServeMux()
	wh, err := inject.NewWebhook(inject.WebhookParameters{
		Watcher: watcher, Env: env, Mux: mux, MultiCluster: clusters,
	})
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	clusters.Add(clusterID, client, stop)
	wh.Run(stop)
	if !client.RunAndWait(stop) {
		return errors.New("the Kubernetes informers did not sync")
	}

	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(l, certFile, keyFile) }()
	if readyFile != "" {
		if err := os.WriteFile(readyFile, []byte(l.Addr().String()), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "istioinject: serving Istio's injection webhook on https://%s/inject\n", l.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

type multiFlag []string

func (f *multiFlag) String() string     { return fmt.Sprint(*f) }
func (f *multiFlag) Set(v string) error { *f = append(*f, v); return nil }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "istioinject: "+format+"\n", args...)
	os.Exit(1)
}
