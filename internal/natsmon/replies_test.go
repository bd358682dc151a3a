package natsmon

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The tests below marshal nats-server's own types for /varz, /routez and
// a reload's answer and read them back with the operator's bounded
// reader, so that the JSON names the reader knows cannot drift from the
// server's.

func TestDecodeLoadedReadsNatsServersVarz(t *testing.T) {
	loaded := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	v := server.Varz{
		ID: "NABC", Name: "n-0", Version: "2.15.3", Now: loaded.Add(90 * time.Second), ConfigLoadTime: loaded,
		Metadata:        map[string]string{"kubenats.io/config": "abc", "team": "x"},
		TLSCertNotAfter: loaded.Add(24 * time.Hour),
		Cluster:         server.ClusterOptsVarz{Name: "nats", TLSCertNotAfter: loaded.Add(48 * time.Hour), URLs: []string{"a:6222"}},
		Tags:            []string{"a"},
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeLoaded(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("decodeLoaded: %v\n%s", err, raw)
	}
	want := Loaded{
		ServerID: "NABC", Metadata: v.Metadata, SinceLoad: 90 * time.Second,
		CertNotAfter: map[string]time.Time{"client": loaded.Add(24 * time.Hour), "routes": loaded.Add(48 * time.Hour)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeLoaded = %+v, want %+v", got, want)
	}
}

func TestDecodeLoadedRefuses(t *testing.T) {
	many := `{"server_id":"N","metadata":{` + strings.TrimSuffix(strings.Repeat(`"k":"",`, maxMetadata+1), ",") + `}}`
	for body, want := range map[string]string{
		`{"server_id":""}`: "names no server id",
		`{"server_id":"N","metadata":{"` + strings.Repeat("k", maxKeyLen+1) + `":""}}`: "metadata key that is empty or longer",
		`{"server_id":"N","now":"yesterday"}`:                                          "time that is not a time",
		`{"server_id":"N","metadata":{"a":1}}`:                                         "is not valid JSON",
	} {
		if _, err := decodeLoaded(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decodeLoaded(%.60s) = %v, want %q", body, err, want)
		}
	}
	// Repeated keys fill one map entry: the count is of entries.
	if _, err := decodeLoaded(strings.NewReader(many)); err != nil {
		t.Errorf("a metadata key repeated: %v", err)
	}
}

func TestFetchRoutePeersReadsNatsServersRoutez(t *testing.T) {
	raw, err := json.Marshal(server.Routez{ID: "N", NumRoutes: 2, Routes: []*server.RouteInfo{
		{Rid: 1, RemoteID: "A", RemoteName: "n-1", IP: "10.0.0.1", Port: 6222},
		{Rid: 2, RemoteID: "B", RemoteName: "n-2", Subs: []string{"a", "b"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(raw) }))
	defer srv.Close()
	got, err := FetchRoutePeers(context.Background(), srv.Client(), srv.URL+"/routez")
	if err != nil || !reflect.DeepEqual(got, []string{"n-1", "n-2"}) {
		t.Fatalf("FetchRoutePeers = %v, %v", got, err)
	}
}

func TestDecodeReloadAnswerReadsNatsServersReply(t *testing.T) {
	ok, _ := json.Marshal(server.ServerAPIResponse{Server: &server.ServerInfo{Name: "n-0", ID: "N", Metadata: map[string]string{"kubenats.io/config": "abc"}}})
	got, err := DecodeReloadAnswer(ok)
	if err != nil || got.Refused || !reflect.DeepEqual(got.Metadata, map[string]string{"kubenats.io/config": "abc"}) {
		t.Fatalf("DecodeReloadAnswer(%s) = %+v, %v", ok, got, err)
	}
	refused, _ := json.Marshal(server.ServerAPIResponse{Server: &server.ServerInfo{Name: "n-0"}, Error: &server.ApiError{Code: 500, Description: "config reload failed"}})
	got, err = DecodeReloadAnswer(refused)
	if err != nil || !got.Refused || got.Code != 500 {
		t.Fatalf("DecodeReloadAnswer(%s) = %+v, %v", refused, got, err)
	}
}
