package loopback

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/test/admission"
)

// Istio in the loopback cluster (Options.Istio): what istiod would do for
// the mesh model. Its CRDs are installed; its own sidecar injector
// (hack/istioinject, Istio's pkg/kube/inject with the configuration
// istioctl's default profile renders) runs as a process and is registered
// with the API server through the MutatingWebhookConfiguration that
// istioctl would install (selecting pods by the sidecar.istio.io/inject
// label or the namespace's istio-injection label), pointed at it; the mesh
// CA's root is published as istio-ca-root-cert in every namespace; and
// PeerAuthentications are fed to the mesh model (istio_policy.go).

// IstioNamespace is istiod's namespace, and the mesh's root namespace
// (mesh-wide PeerAuthentications live there).
const IstioNamespace = meshRootNamespace

// istioWebhookTimeout bounds the wait for the injector and its webhook.
const istioWebhookTimeout = 2 * time.Minute

type istiod struct {
	proc *process
	log  string
}

// startIstio installs Istio's CRDs from binDir/crds, runs the injector
// from binDir/inject and registers its webhook; it returns once the API
// server injects a pod labelled for injection.
func startIstio(ctx context.Context, env *envtest.Environment, cfg *rest.Config, mesh *Mesh, binDir, dir, logPath string, r *reaper) (*istiod, error) {
	bin := filepath.Join(binDir, "inject")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("istio: %w (run hack/build-istio.sh or `make test-bins`)", err)
	}
	cs, err := installAddOn(ctx, cfg, "Istio", filepath.Join(binDir, "crds"), IstioNamespace)
	if err != nil {
		return nil, err
	}

	webhook, err := renderedWebhook(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := mesh.ca.servingCert(net.ParseIP("127.0.0.1"))
	if err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "istiod-webhook.crt"), filepath.Join(dir, "istiod-webhook.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	kubeconfigPath, err := adminKubeconfig(env, dir, "istiod")
	if err != nil {
		return nil, err
	}
	ready := filepath.Join(dir, "istiod.ready")
	args := []string{"--kubeconfig=" + kubeconfigPath, "--listen=127.0.0.1:0",
		"--tls-cert=" + certFile, "--tls-key=" + keyFile, "--ready-file=" + ready}
	proc, err := startProcess(r, bin, args, os.Environ(), dir, logPath, "")
	if err != nil {
		return nil, err
	}
	i := &istiod{proc: proc, log: logPath}
	addr, err := i.waitReady(ctx, ready)
	if err != nil {
		i.stop()
		return nil, err
	}
	if err := registerWebhook(ctx, cs, webhook, "https://"+addr, mesh.ca.rootPEM()); err != nil {
		i.stop()
		return nil, err
	}
	if err := waitInjecting(ctx, cs); err != nil {
		i.stop()
		return nil, fmt.Errorf("%w\n%s", err, tail(logPath, 30))
	}
	return i, nil
}

// renderedWebhook is the MutatingWebhookConfiguration istioctl's default
// profile installs, as the injector binary renders it.
func renderedWebhook(ctx context.Context, bin, dir string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	path := filepath.Join(dir, "istio-webhook.json")
	out, err := exec.CommandContext(ctx, bin, "--webhook-config="+path).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("rendering Istio's webhook configuration: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	if err := json.Unmarshal(data, &mwc); err != nil {
		return nil, fmt.Errorf("Istio's webhook configuration: %w", err)
	}
	return &mwc, nil
}

// registerWebhook creates Istio's webhooks with their service replaced by
// the injector's address (there is no istiod Service to route through).
func registerWebhook(ctx context.Context, cs kubernetes.Interface, mwc *admissionregistrationv1.MutatingWebhookConfiguration, base string, caBundle []byte) error {
	mwc = mwc.DeepCopy()
	mwc.ResourceVersion, mwc.UID = "", ""
	for i := range mwc.Webhooks {
		admission.SendTo(&mwc.Webhooks[i].ClientConfig, base, "/inject")
		mwc.Webhooks[i].ClientConfig.CABundle = caBundle
	}
	_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
	return err
}

// waitInjecting returns once the API server calls the webhook: a dry-run
// pod labelled for injection comes back with Istio's status annotation
// (the API server picks webhook configurations up asynchronously).
func waitInjecting(ctx context.Context, cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, istioWebhookTimeout)
	defer cancel()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "istio-injection-check", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"sidecar.istio.io/inject": "true"}},
		// The API server here runs without the ServiceAccount admission
		// plugin, which would set the name; the injected token volume needs it.
		Spec: corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
	var last error
	for {
		got, err := cs.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && got.Annotations[istioStatusAnnotation] != "" {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("a pod labelled for injection was not injected")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("istio: the injection webhook did not take effect within %s: %v", istioWebhookTimeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (i *istiod) waitReady(ctx context.Context, ready string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, istioWebhookTimeout)
	defer cancel()
	for {
		if data, err := os.ReadFile(ready); err == nil && len(data) > 0 {
			return strings.TrimSpace(string(data)), nil
		}
		select {
		case <-i.proc.done:
			return "", fmt.Errorf("Istio's injector exited (%v):\n%s", i.proc.state, tail(i.log, 30))
		case <-ctx.Done():
			return "", fmt.Errorf("Istio's injector did not serve within %s:\n%s", istioWebhookTimeout, tail(i.log, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (i *istiod) stop() {
	if i != nil && i.proc != nil {
		i.proc.stop(syscall.SIGTERM, 10*time.Second)
	}
}
