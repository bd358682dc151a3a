package exporter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDecodeIsBounded: an answer past its cap is an error, whatever it
// holds. Careless variant watched failing: io.ReadAll before decoding
// reads the whole endless body.
func TestDecodeIsBounded(t *testing.T) {
	var h Healthz
	big := `{"status":"` + strings.Repeat("o", 2000) + `"}`
	if err := Decode(strings.NewReader(big), 1000, &h); err == nil {
		t.Fatal("a body over the cap decoded")
	}
	if err := Decode(strings.NewReader(`{"status":"ok"}`), 1000, &h); err != nil || h.Status != "ok" {
		t.Fatalf("small body: %v %+v", err, h)
	}
}

// TestFetcherRefusesRedirects: the monitor port runs the tenant's image;
// a redirect is a failed read, not a trip elsewhere.
func TestFetcherRefusesRedirects(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"status":"ok"}`)) }))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/healthz", http.StatusFound))
	defer srv.Close()
	f, err := NewHTTPFetcher(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h Healthz
	if err := f.Fetch(context.Background(), HealthzPath, MaxHealthzBody, true, &h); err == nil {
		t.Fatalf("followed a redirect: %+v", h)
	}
}

// TestDecodeBoundsWhatItKeeps: within the byte cap, a /jsz listing more
// streams than maxStreams is refused, and one just at the limit is read:
// memory is bounded by what is kept, not only by bytes (`{}` is two bytes
// of body and a whole Stream of result). Careless variant watched
// failing: reading stream_detail without counting (encoding/json, or an
// Array limit of max int), which decodes all of them.
func TestDecodeBoundsWhatItKeeps(t *testing.T) {
	body := func(n int) string {
		return `{"account_details":[{"name":"APP","stream_detail":[` + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + `]}]}`
	}
	var z JSZ
	if err := Decode(strings.NewReader(body(maxStreams)), MaxJSZBody, &z); err != nil || len(z.Accounts[0].Streams) != maxStreams {
		t.Fatalf("%d streams: %v", maxStreams, err)
	}
	if err := Decode(strings.NewReader(body(maxStreams+1)), MaxJSZBody, &z); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("%d streams decoded: %v", maxStreams+1, err)
	}
}

// TestDecodeReadsNumbersAsTheServerWritesThem: /varz's cpu is a fraction,
// counts are integers; a number where a string belongs is an error, not a
// zero.
func TestDecodeReadsNumbersAsTheServerWritesThem(t *testing.T) {
	var v Varz
	if err := Decode(strings.NewReader(`{"server_name":"n-0","cpu":1.5,"mem":12345,"start":"2026-12-02T04:00:00Z","extra":{"a":[1,2]}}`), MaxVarzBody, &v); err != nil {
		t.Fatal(err)
	}
	if v.ServerName != "n-0" || v.CPU != 1.5 || v.Mem != 12345 || v.Start.IsZero() {
		t.Fatalf("%+v", v)
	}
	if err := Decode(strings.NewReader(`{"server_name":7}`), MaxVarzBody, &v); err == nil {
		t.Fatal("a number as the server's name decoded")
	}
}
