package e2e_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// The mesh's mode seen at the wire. NATS speaks first, so a plaintext NATS
// client outside the mesh hangs alike under PERMISSIVE (the sidecar waits
// for the client's first byte before it connects upstream) and under
// STRICT (it waits for a TLS handshake): a client that times out proves
// nothing. A probe that speaks first tells them apart: under STRICT the
// sidecar refuses plaintext and closes without a byte; under PERMISSIVE
// it passes the PING on and the server answers with its INFO. A route
// port with route TLS takes only TLS from its first byte (a PING would be
// refused by nats-server itself, under either mode), so there the probe
// speaks TLS first, not Istio's: STRICT closes before any answer,
// PERMISSIVE passes it on and the server shows its route certificate.

// wireAnswer is what a server port does to a client that speaks first.
type wireAnswer int

const (
	wireClosed   wireAnswer = iota // closed without a byte: STRICT
	wireAnswered                   // answered (INFO, or a TLS certificate): PERMISSIVE or no sidecar
)

func (a wireAnswer) String() string {
	if a == wireClosed {
		return "closed unanswered"
	}
	return "answered"
}

// probeClientFirst sends PING to ip:port from outside the mesh and reports
// whether the port answered with INFO or closed without a byte. A port
// that neither answers nor closes within the deadline is an error: a
// hang is no evidence of either.
func probeClientFirst(ip, port string) (wireAnswer, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	switch {
	case strings.HasPrefix(line, "INFO "):
		return wireAnswered, nil
	case line == "" && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)):
		return wireClosed, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, fmt.Errorf("%s:%s neither answered nor closed: a hang tells nothing", ip, port)
	}
	return 0, fmt.Errorf("%s:%s said %q (%v)", ip, port, line, err)
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// probeTLSFirst opens a TLS handshake (not Istio's) to ip:port and reports
// whether the port answered with a certificate or closed before any.
func probeTLSFirst(ip, port string) (wireAnswer, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Deadline: time.Now().Add(5 * time.Second)}
	var seen bool
	conn, err := tls.DialWithDialer(dialer, "tcp", net.JoinHostPort(ip, port), &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // looked at, not trusted
		VerifyConnection: func(cs tls.ConnectionState) error {
			seen = len(cs.PeerCertificates) > 0
			return nil
		},
	})
	if conn != nil {
		conn.Close()
	}
	switch {
	case seen:
		return wireAnswered, nil
	case errors.Is(err, io.EOF) || isReset(err):
		return wireClosed, nil
	}
	return 0, fmt.Errorf("%s:%s: neither a certificate nor a close (%v): a hang tells nothing", ip, port, err)
}

// checkWire requires every server's client and route ports to give want to
// a client outside the mesh that speaks first. Seen failing against the
// careless variant it exists for: the operator's PeerAuthentication
// rendered with a selector that matches no pod (managed-by kept, so that
// admission lets it through, and one label no pod has), under which the
// operator reports STRICT, the guard sees STRICT, and a plaintext NATS
// client outside the mesh still times out exactly as under STRICT;
// TestMeshNewClusterEndsStrict then failed here with "nats-0:4222 answered
// to a client outside the mesh that speaks first, want closed unanswered".
func checkWire(t *testing.T, f *formed, want wireAnswer) {
	t.Helper()
	for _, pod := range f.Pods {
		for _, port := range []string{"4222", "6222"} {
			probe := probeClientFirst
			if port == "6222" && f.Cluster.Spec.RouteTLSEnabled() {
				probe = probeTLSFirst
			}
			eventually(t, wait, func() error {
				got, err := probe(f.IP(pod), port)
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("%s:%s %s to a client outside the mesh that speaks first, want %s", pod, port, got, want)
				}
				return nil
			})
		}
	}
}
