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
