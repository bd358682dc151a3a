package loopback

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/poll"
)

// TestMetricsCertificateOfTheCertManagerInstall: the cert-manager objects
// of dist/install-metrics-certmanager.yaml, applied as shipped to an API
// server with cert-manager's own controllers, give a Secret that the
// operator's metrics endpoint serves (the files as the kubelet mounts
// them) and that a scraper verifies as the ServiceMonitor does: against
// the Secret's ca.crt, under the Service's name. A renewal is served
// without a restart, and still verifies against the ca.crt the scraper
// already holds. Careless variants run: the leaf issued by the self-signed
// Issuer directly (the renewal's ca.crt is a new self-signed certificate:
// the scraper's old CA refuses it), and dnsNames without the .svc name
// (the first verification fails).
func TestMetricsCertificateOfTheCertManagerInstall(t *testing.T) {
	t.Parallel()
	if err := runBuild(BuildCertManager); err != nil {
		t.Fatal(err)
	}
	env := bareAPIServer(t)
	ctx := context.Background()
	cm, err := RunCertManager(ctx, env, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cert-manager log:\n%s", cm.Log())
		}
		cm.Stop()
	})
	k8s, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "kubenats-system"
	must(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	apply(t, k8s, ns, certManagerObjectsOfTheInstall(t))
	secret := readyCertificateSecret(t, k8s, ns, "kubenats-metrics", "")

	dir := t.TempDir()
	mountSecret(t, dir, secret)
	scraper := x509.NewCertPool()
	if !scraper.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		t.Fatal("the Secret has no ca.crt a scraper could trust")
	}
	o := manager.Options{MetricsBindAddress: "127.0.0.1:0", MetricsCertDir: dir}
	srv, err := metricsserver.NewServer(manager.MetricsOptions(o), &rest.Config{Host: env.Config.Host}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(srvCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	bound := srv.(interface{ GetBindAddr() string })
	poll.Until(t, 10*time.Second, func() error {
		if bound.GetBindAddr() == "" {
			return errors.New("not listening yet")
		}
		return nil
	})
	served := func() (*big.Int, error) {
		conn, err := tls.Dial("tcp", bound.GetBindAddr(), &tls.Config{RootCAs: scraper, ServerName: "kubenats-metrics." + ns + ".svc", MinVersion: tls.VersionTLS12})
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber, nil
	}
	first := parseCertificate(t, secret.Data["tls.crt"]).SerialNumber
	if got, err := served(); err != nil || got.Cmp(first) != 0 {
		t.Fatalf("the scraper cannot verify the issued certificate: serial %v (issued %v), %v", got, first, err)
	}

	must(t, TriggerRenewal(ctx, k8s, ns, "kubenats-metrics"))
	renewed := readyCertificateSecret(t, k8s, ns, "kubenats-metrics", first.String())
	mountSecret(t, dir, renewed)
	want := parseCertificate(t, renewed.Data["tls.crt"]).SerialNumber
	poll.Until(t, 30*time.Second, func() error {
		got, err := served()
		if err != nil {
			return err
		}
		if got.Cmp(want) != 0 {
			return fmt.Errorf("serving serial %v, not the renewal's %v", got, want)
		}
		return nil
	})
}

// certManagerObjectsOfTheInstall are the cert-manager.io documents of
// dist/install-metrics-certmanager.yaml, as shipped.
func certManagerObjectsOfTheInstall(t *testing.T) string {
	t.Helper()
	root, err := findRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "dist", "install-metrics-certmanager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var head struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(head.APIVersion, "cert-manager.io/") {
			kept = append(kept, doc)
		}
	}
	if len(kept) != 4 {
		t.Fatalf("%d cert-manager objects in the install, want the root and CA Issuers, the CA and the leaf", len(kept))
	}
	return strings.Join(kept, "\n---\n")
}

// mountSecret writes the Secret's files into dir the way the kubelet
// updates a Secret volume: whole files, swapped in by a rename.
func mountSecret(t *testing.T, dir string, s *corev1.Secret) {
	t.Helper()
	for _, key := range []string{"tls.crt", "tls.key", "ca.crt"} {
		tmp := filepath.Join(dir, "."+key+".new")
		must(t, os.WriteFile(tmp, s.Data[key], 0o600))
		must(t, os.Rename(tmp, filepath.Join(dir, key)))
	}
}
