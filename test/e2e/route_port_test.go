package e2e_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// checkRoutePort: with route TLS the route port speaks TLS from its first
// byte, shows a certificate for the server's DNS names and refuses a
// handshake without a client certificate; without, its INFO asks for
// authentication. It returns the issuer of the certificate shown (empty
// without TLS).
func checkRoutePort(t *testing.T, f *formed, pod string, wantTLS bool) (issuer string) {
	t.Helper()
	addr := net.JoinHostPort(f.IP(pod), "6222")
	if !wantTLS {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			AuthRequired bool `json:"auth_required"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "INFO ")), &info); err != nil || !info.AuthRequired {
			t.Fatalf("%s's route port says %q: want INFO with auth_required", pod, line)
		}
		return ""
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	// Only to look at the certificate: no client certificate offered.
	conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		// TLS 1.3 reports a refused client certificate on the first read.
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		state := conn.ConnectionState()
		if len(state.PeerCertificates) > 0 {
			issuer = state.PeerCertificates[0].Issuer.String()
			names := state.PeerCertificates[0].DNSNames
			if !slices.Contains(names, "*."+f.Cluster.Name+"-headless") || len(state.PeerCertificates[0].IPAddresses) != 0 {
				t.Errorf("%s's route certificate names %v, IPs %v; want the headless wildcards and no IP", pod, names, state.PeerCertificates[0].IPAddresses)
			}
		}
		conn.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("%s's route port took a TLS client without a certificate (error %v)", pod, err)
	}
	if issuer == "" {
		t.Fatalf("%s's route port speaks TLS but showed no certificate", pod)
	}
	return issuer
}

// natsServerBinary is the nats-server of the operator's default version.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(cluster.RepoRoot(), "bin", "nats-server", v1alpha1.DefaultVersion, "nats-server")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}
