package testnats

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

func TestStartServesJetStreamOnTheRequestedPort(t *testing.T) {
	port := FreePort(t)
	s := Start(t, port, func(o *server.Options) { o.ServerName = "probe" })
	if want := fmt.Sprintf("nats://127.0.0.1:%d", port); URL(s) != want {
		t.Fatalf("URL = %s, want %s", URL(s), want)
	}
	if !s.JetStreamEnabled() || s.Name() != "probe" {
		t.Fatalf("JetStream %t, name %q; want JetStream on, the edited name", s.JetStreamEnabled(), s.Name())
	}
}
