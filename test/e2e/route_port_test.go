package e2e_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/render"
)

// routePort is what a server's route port (6222) shows a stranger: the
// INFO it sends first, and, when that INFO asks for TLS, the certificate
// it presents. It is read from the port itself, so a test built on it
// cannot be fooled by what the operator writes in a pod's annotations.
type routePort struct {
	tls    bool
	issuer string // the presented certificate's issuer, when tls
	serial string // and its serial number
}

// probeRoutePort dials ip:6222, reads the server's INFO and, if it asks for
// TLS, shakes hands far enough to see the server's certificate (a server
// that requires a client certificate refuses the rest, which is expected).
func probeRoutePort(ip string) (routePort, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, "6222"), 5*time.Second)
	if err != nil {
		return routePort{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReaderSize(conn, 64<<10).ReadString('\n')
	if err != nil {
		return routePort{}, fmt.Errorf("no INFO on %s:6222: %w", ip, err)
	}
	rest, ok := strings.CutPrefix(line, "INFO ")
	if !ok {
		return routePort{}, fmt.Errorf("%s:6222 sent %q, not INFO", ip, line)
	}
	var info struct {
		TLSRequired bool `json:"tls_required"`
	}
	if err := json.Unmarshal([]byte(rest), &info); err != nil {
		return routePort{}, fmt.Errorf("%s:6222 INFO: %w", ip, err)
	}
	if !info.TLSRequired {
		return routePort{}, nil
	}
	var leaf *x509.Certificate
	tc := tls.Client(conn, &tls.Config{
		// The certificate is looked at, not trusted: the test compares its
		// issuer with the CA it expects.
		InsecureSkipVerify: true, //nolint:gosec
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) > 0 {
				leaf = cs.PeerCertificates[0]
			}
			return nil
		},
	})
	_ = tc.Handshake()
	if leaf == nil {
		return routePort{}, fmt.Errorf("%s:6222 asks for TLS but presented no certificate", ip)
	}
	return routePort{tls: true, issuer: leaf.Issuer.String(), serial: leaf.SerialNumber.String()}, nil
}

// clusterCAName is the subject of the cluster's own route CA, as the
// operator keeps it in its CA Secret.
func clusterCAName(t *testing.T, f *formed) string {
	t.Helper()
	var s corev1.Secret
	if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: f.ns, Name: render.CASecretName(f.cluster)}, &s); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(s.Data[render.TLSCertKey])
	if block == nil {
		t.Fatalf("the CA Secret %s has no %s", s.Name, render.TLSCertKey)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return ca.Subject.String()
}

// checkRoutePorts requires every server's route port to speak TLS with a
// certificate of the cluster's own CA (on), or plain NATS (off).
func checkRoutePorts(t *testing.T, f *formed, on bool) {
	t.Helper()
	var ca string
	if on {
		ca = clusterCAName(t, f)
	}
	for _, pod := range f.pods {
		eventually(t, wait, func() error {
			got, err := probeRoutePort(f.ip(pod))
			if err != nil {
				return err
			}
			if got.tls != on {
				return fmt.Errorf("%s: route port TLS %v, want %v", pod, got.tls, on)
			}
			if on && got.issuer != ca {
				return fmt.Errorf("%s: route certificate issued by %q, want the cluster's CA %q", pod, got.issuer, ca)
			}
			return nil
		})
	}
}
