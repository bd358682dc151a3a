package exporter

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/test/testnats"
)

// TestExporterAgainstARealServer reads a real nats-server's monitor port
// over HTTP and serves Prometheus text that names the server by its name.
func TestExporterAgainstARealServer(t *testing.T) {
	srv := testnats.Start(t, 0, func(o *server.Options) {
		o.ServerName = "n-0"
		o.HTTPHost = "127.0.0.1"
		o.HTTPPort = testnats.FreePort(t)
	})
	fetch, err := NewHTTPFetcher("http://"+srv.MonitorAddr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(Handler(NewCollector(Identity{Server: "n-0", Namespace: "ns", NatsCluster: "nc"}, fetch, 100)))
	defer h.Close()
	resp, err := http.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	for _, want := range []string{
		`nats_varz_connections{namespace="ns",natscluster="nc",server_id="n-0",server_name="n-0"} 0`,
		`nats_healthz_status{namespace="ns",natscluster="nc",server_id="n-0",server_name="n-0"} 0`,
		`kubenats_exporter_server_up{namespace="ns",natscluster="nc",server_id="n-0",server_name="n-0"} 1`,
		`nats_server_jetstream_disabled{`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, fmt.Sprintf("%q", srv.ID())) {
		t.Errorf("the per-start server id %s is served", srv.ID())
	}
}
