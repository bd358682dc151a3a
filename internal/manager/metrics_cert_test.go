package manager

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubenats/kubenats/internal/pki"
)

// The name Prometheus verifies: the ServiceMonitor's serverName.
const metricsServerName = "kubenats-metrics.kubenats-system.svc"

func TestCheckMetricsCert(t *testing.T) {
	ca := newTestCA(t)
	good := writeMetricsCert(t, t.TempDir(), issueMetricsCert(t, ca))
	other := issueMetricsCert(t, ca)
	mismatched := t.TempDir()
	mine := issueMetricsCert(t, ca)
	writeMetricsCert(t, mismatched, pki.KeyPair{Cert: mine.Cert, Key: other.Key})
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr bool
	}{
		{"none given: self-signed", Options{MetricsBindAddress: ":8443"}, false},
		{"a served pair", Options{MetricsBindAddress: ":8443", MetricsCertDir: good}, false},
		{"an empty directory", Options{MetricsBindAddress: ":8443", MetricsCertDir: t.TempDir()}, true},
		{"a directory that is not there", Options{MetricsBindAddress: ":8443", MetricsCertDir: filepath.Join(t.TempDir(), "gone")}, true},
		{"a key of another certificate", Options{MetricsBindAddress: ":8443", MetricsCertDir: mismatched}, true},
		{"metrics off: nothing to serve", Options{MetricsBindAddress: "0", MetricsCertDir: t.TempDir()}, false},
		{"plain HTTP: nothing to serve", Options{MetricsBindAddress: ":8443", InsecureMetrics: true, MetricsCertDir: t.TempDir()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMetricsCert(tc.o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("checkMetricsCert = %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "--metrics-cert-dir") {
				t.Errorf("the error does not name the flag: %v", err)
			}
		})
	}
}

// TestMetricsServeTheGivenCertificateAndItsRenewal: a client that trusts only
// the issuing CA and checks the Service's name (as the ServiceMonitor does)
// completes the handshake, and a renewed certificate written into the
// directory the way the kubelet updates a Secret volume (a rename) is served
// without a restart. Careless variants: MetricsOptions without CertDir (the
// self-signed fallback: the first handshake fails, unknown authority); a
// certificate read once at start (tls.Config.Certificates instead of the
// watcher: the renewed serial never appears).
func TestMetricsServeTheGivenCertificateAndItsRenewal(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	first := issueMetricsCert(t, ca)
	writeMetricsCert(t, dir, first)
	o := Options{MetricsBindAddress: "127.0.0.1:0", MetricsCertDir: dir}
	if err := checkMetricsCert(o); err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(MetricsOptions(o), &rest.Config{Host: "https://127.0.0.1:1"}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	addr := boundMetricsAddr(t, srv)

	served := func() (*x509.Certificate, error) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.pool, ServerName: metricsServerName, MinVersion: tls.VersionTLS12})
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0], nil
	}
	got, err := served()
	if err != nil {
		t.Fatalf("a client trusting the issuing CA cannot verify the metrics endpoint: %v", err)
	}
	if want := serialOf(t, first); got.SerialNumber.Cmp(want) != 0 {
		t.Fatalf("served serial %v, want the given certificate's %v", got.SerialNumber, want)
	}
	// Behind the verified handshake is the metrics endpoint, which refuses
	// a caller without a token before asking the API server anything.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool, ServerName: metricsServerName, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Get("https://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a token: %d, want 401", resp.StatusCode)
	}

	renewed := issueMetricsCert(t, ca)
	writeMetricsCert(t, dir, renewed)
	want := serialOf(t, renewed)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := served()
		if err == nil && got.SerialNumber.Cmp(want) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate is not served 30 s after it was written (last: %v, %v)", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type testCA struct {
	pki.KeyPair
	pool *x509.CertPool
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	ca, err := pki.NewCA("kubenats-metrics-ca", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ca.Cert)) {
		t.Fatal("the CA does not parse")
	}
	return testCA{KeyPair: ca, pool: pool}
}

func issueMetricsCert(t *testing.T, ca testCA) pki.KeyPair {
	t.Helper()
	kp, err := pki.Issue(ca.KeyPair, []string{metricsServerName}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// writeMetricsCert writes both files beside the directory and renames them
// in: a watcher never reads half a file.
func writeMetricsCert(t *testing.T, dir string, kp pki.KeyPair) string {
	t.Helper()
	for name, text := range map[string]string{metricsCertFile: kp.Cert, metricsKeyFile: kp.Key} {
		tmp := filepath.Join(dir, "."+name+".new")
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func serialOf(t *testing.T, kp pki.KeyPair) *big.Int {
	t.Helper()
	cert, err := pki.ParseCert(kp.Cert)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber
}

func boundMetricsAddr(t *testing.T, srv metricsserver.Server) string {
	t.Helper()
	bound, ok := srv.(interface{ GetBindAddr() string })
	if !ok {
		t.Fatal("the metrics server does not tell its address")
	}
	deadline := time.Now().Add(10 * time.Second)
	for bound.GetBindAddr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the metrics server did not listen within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return bound.GetBindAddr()
}
