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
// which exchange messages with a client on 4222; no credentials or a
// wrong password get nats-server's refusal, not a hang; and nothing
// answers a TLS handshake there. The no-credentials case is there for a
// websocket block with a no_auth_user of its own; tried, that variant
// never ran: the operator's own configuration check refuses the key
// (Ready ConfigInvalid), which is the layer that catches it first.
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
	nc, err := e2ekit.Connect(t, e2ekit.PodURLs(f, []string{pod}), nats.UserInfo(creds["user"], creds["password"]),
		e2ekit.ClusterDNS(), e2ekit.ClusterTLS(t, creds))
	if err != nil {
		t.Fatalf("tls:// on 4222: %v", err)
	}
	exchange(t, ws, nc, "proxied.to.nats")
	exchange(t, nc, ws, "nats.to.proxied")

	for name, opts := range map[string][]nats.Option{
		"no credentials": nil,
		"wrong password": {nats.UserInfo(creds["user"], "not-"+creds["password"])},
	} {
		// The server writes its -ERR and closes; now and then the client's
		// write of CONNECT meets the closed socket first (broken pipe), and
		// is tried again. One that connects fails at once.
		for range 5 {
			if _, err = e2ekit.Connect(t, "ws://"+addr(8080), opts...); err == nil {
				t.Fatalf("%s over ws://: connected", name)
			}
			if errors.Is(err, nats.ErrAuthorization) {
				break
			}
		}
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Errorf("%s over ws://: %v, want nats-server's Authorization Violation", name, err)
		}
	}
	if _, err := e2ekit.Connect(t, "wss://"+addr(8080), nats.UserInfo(creds["user"], creds["password"]),
		nats.Secure(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})); err == nil { //nolint:gosec // only whether TLS is served
		t.Fatal("wss:// connected to the noTLS listener: it serves TLS")
	}
}
