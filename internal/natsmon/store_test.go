package natsmon

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/test/testnats"
)

// TestFetchStoreUseSeesAFullStore: a real nats-server whose file store
// reached max_file_store refuses publishes with "insufficient resources"
// and reports its use at or past the limit on /jsz; a purge gives it room
// again, and it says so.
func TestFetchStoreUseSeesAFullStore(t *testing.T) {
	const limit = 4 << 20
	s := testnats.Start(t, 0, func(o *server.Options) {
		o.JetStreamMaxStore = limit
		o.HTTPHost, o.HTTPPort = "127.0.0.1", -1
	})
	url := "http://" + s.MonitorAddr().String() + StoreQuery
	hc := &http.Client{Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	nc, err := nats.Connect(testnats.URL(s))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FILL", Subjects: []string{"fill"}})
	if err != nil {
		t.Fatal(err)
	}
	use, err := FetchStoreUse(ctx, hc, url)
	if err != nil || use.Full() || use.Limit != limit || use.JetStreamDisabled {
		t.Fatalf("empty store: %+v, %v; want room, limit %d", use, err, limit)
	}

	payload := []byte(strings.Repeat("x", 16<<10))
	var refusal error
	for i := 0; i < 2*limit/len(payload) && refusal == nil; i++ {
		_, refusal = js.Publish(ctx, "fill", payload)
	}
	var apiErr *jetstream.APIError
	if !errors.As(refusal, &apiErr) || apiErr.ErrorCode != jetstream.ErrorCode(server.JSInsufficientResourcesErr) {
		t.Fatalf("publishing twice the limit: %v, want insufficient resources", refusal)
	}
	use, err = FetchStoreUse(ctx, hc, url)
	if err != nil || !use.Full() || use.JetStreamDisabled {
		t.Fatalf("full store: %+v, %v; want it full, JetStream on", use, err)
	}

	if err := stream.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	use, err = FetchStoreUse(ctx, hc, url)
	if err != nil || use.Full() || use.Used != 0 {
		t.Fatalf("purged store: %+v, %v; want it empty", use, err)
	}
}

func TestStoreUseFull(t *testing.T) {
	for _, tc := range []struct {
		use  StoreUse
		full bool
	}{
		{StoreUse{Used: 0, Limit: 128 << 20}, false},
		{StoreUse{Used: 127<<20 - 1, Limit: 128 << 20}, false},
		{StoreUse{Used: 127 << 20, Limit: 128 << 20}, true}, // one message from the limit
		{StoreUse{Used: 128 << 20, Limit: 128 << 20}, true},
		{StoreUse{Used: 128<<20 + 1, Limit: 128 << 20}, true}, // past it: refused
		{StoreUse{Used: 0, Limit: FullMargin}, true},          // no message fits
		{StoreUse{Used: 1 << 40, Limit: 0}, false},
		{StoreUse{Used: 1 << 40, Limit: -1}, false},
	} {
		if got := tc.use.Full(); got != tc.full {
			t.Errorf("%+v.Full() = %v, want %v", tc.use, got, tc.full)
		}
	}
}

// TestFetchStoreUseReadsTheMetaLeader: the meta leader comes from the
// same /jsz, as nats-server writes it (its own types marshalled); a
// server outside a cluster (meta_cluster null or absent) names none.
func TestFetchStoreUseReadsTheMetaLeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		info server.JSInfo
		want string
	}{
		{"clustered", server.JSInfo{Meta: &server.MetaClusterInfo{Name: "nats", Leader: "nats-1", Size: 3}}, "nats-1"},
		{"alone", server.JSInfo{}, ""},
	} {
		body, err := json.Marshal(tc.info)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
		use, err := FetchStoreUse(context.Background(), srv.Client(), srv.URL+StoreQuery)
		srv.Close()
		if err != nil || use.MetaLeader != tc.want {
			t.Errorf("%s: meta leader %q (%v), want %q", tc.name, use.MetaLeader, err, tc.want)
		}
	}
}
