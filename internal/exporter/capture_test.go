package exporter

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/test/testnats"
)

// The testdata are what real nats-servers answer on their monitor port, so
// that the translation is table-tested against the server's own JSON, not
// a shape guessed from its Go types. Regenerate with
//
//	go test ./internal/exporter -run TestCaptureMonitorJSON -update
var update = flag.Bool("update", false, "capture testdata/ from real nats-servers")

// Workload of the captured cluster, which the translation tests check.
const (
	capturedStream    = "ORDERS"
	capturedMirror    = "ORDERS_COPY"
	capturedConsumer  = "worker"
	capturedPublished = 10
	capturedFetched   = 4
	capturedAcked     = 3
)

// TestCaptureMonitorJSON starts three clustered servers (c-0, c-1, c-2),
// gives them an R3 stream with a pull consumer that fetched 4 of 10
// messages and acked 3, and an R1 mirror of it, and writes every server's
// /varz, /jsz and /healthz: into testdata/ with -update, otherwise into a
// scratch directory, where every answer is decoded as the exporter
// decodes it, so that the capture the table tests rest on keeps working.
func TestCaptureMonitorJSON(t *testing.T) {
	dir := "testdata"
	if !*update {
		dir = t.TempDir()
	}
	names := []string{"c-0", "c-1", "c-2"}
	cports := []int{testnats.FreePort(t), testnats.FreePort(t), testnats.FreePort(t)}
	var servers []*server.Server
	for i, name := range names {
		var routes []*url.URL
		for j, p := range cports {
			if j != i {
				routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
			}
		}
		servers = append(servers, testnats.Start(t, 0, func(o *server.Options) {
			o.ServerName = name
			o.HTTPHost = "127.0.0.1"
			o.HTTPPort = testnats.FreePort(t)
			o.Cluster = server.ClusterOpts{Name: "nats", Host: "127.0.0.1", Port: cports[i]}
			o.Routes = routes
		}))
	}
	nc, err := nats.Connect(testnats.URL(servers[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var s jetstream.Stream
	for {
		// The meta group elects its leader a few seconds after the
		// routes are up: until then a create goes unanswered.
		attempt, stop := context.WithTimeout(ctx, 2*time.Second)
		s, err = js.CreateStream(attempt, jetstream.StreamConfig{Name: capturedStream, Subjects: []string{"orders.>"}, Replicas: 3})
		stop()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
	}
	for i := range capturedPublished {
		if _, err := js.Publish(ctx, fmt.Sprintf("orders.%d", i%3), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: capturedConsumer, AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(capturedFetched)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if n < capturedAcked {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n++
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: capturedMirror, Replicas: 1, Mirror: &jetstream.StreamSource{Name: capturedStream}}); err != nil {
		t.Fatal(err)
	}
	// The mirror has copied every message: the capture shows it settled.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mirror, err := js.Stream(ctx, capturedMirror)
		if err == nil {
			if info, err := mirror.Info(ctx); err == nil && info.State.Msgs == capturedPublished {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirror did not copy %d messages within 30 s", capturedPublished)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i, srv := range servers {
		base := "http://" + srv.MonitorAddr().String()
		for file, path := range map[string]string{"varz": "/varz", "jsz": JSZPath, "healthz": "/healthz"} {
			name := filepath.Join(dir, names[i]+"-"+file+".json")
			capture(t, base+path, name)
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			v := map[string]any{"varz": &Varz{}, "jsz": &JSZ{}, "healthz": &Healthz{}}[file]
			if err := Decode(f, MaxJSZBody, v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			f.Close()
		}
	}
}

func capture(t *testing.T, u, file string) {
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
}
