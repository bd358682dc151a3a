package e2elisteners_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestWebSocketBehindAProxy: websocket.noTLS (a proxy in front terminates
// TLS) serves plain ws:// on 8080 to clients with the credentials Secret,
// which exchange messages with a client on 4222; a wrong password gets
// nats-server's refusal, not a hang; and nothing answers a TLS handshake
// there. Careless variants: a websocket block rendered with tls while
// noTLS is set (ws:// clients fail their upgrade), and one with a
// no_auth_user or an authorization block of its own (the wrong password is
// let in).
func TestWebSocketBehindAProxy(t *testing.T) {
	t.Parallel()
	f := e2ekit.FormCluster(t, func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true}
	})
	creds := e2ekit.Credentials(t, f)
	pod := f.Pods[0]
	addr := func(port int) string { return fmt.Sprintf("%s:%d", f.IP(pod), port) }

	ws, err := e2ekit.Connect(t, "ws://"+addr(8080), nats.UserInfo(creds["user"], creds["password"]))
	if err != nil {
		t.Fatalf("ws:// with the credentials Secret: %v", err)
	}
	nc, err := e2ekit.Connect(t, "nats://"+addr(4222), nats.UserInfo(creds["user"], creds["password"]))
	if err != nil {
		t.Fatalf("nats:// on 4222: %v", err)
	}
	exchange(t, ws, nc, "proxied.to.nats")
	exchange(t, nc, ws, "nats.to.proxied")

	// The server writes its -ERR and closes; now and then the client's
	// write of CONNECT meets the closed socket first (broken pipe), and is
	// tried again. One that connects fails at once.
	for range 5 {
		if _, err = e2ekit.Connect(t, "ws://"+addr(8080), nats.UserInfo(creds["user"], "not-"+creds["password"])); err == nil {
			t.Fatal("a wrong password connected over ws://")
		}
		if errors.Is(err, nats.ErrAuthorization) {
			break
		}
	}
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("wrong password over ws://: %v, want nats-server's Authorization Violation", err)
	}
	if _, err := e2ekit.Connect(t, "wss://"+addr(8080), nats.UserInfo(creds["user"], creds["password"]),
		nats.Secure(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})); err == nil { //nolint:gosec // only whether TLS is served
		t.Fatal("wss:// connected to the noTLS listener: it serves TLS")
	}
}
