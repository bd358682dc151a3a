package natsmon

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// redirectingServers are a monitor port that answers every request with a
// redirect to a second server, and that second server, which counts the
// requests it gets and would answer /varz with a version.
func redirectingServers(t *testing.T, status int) (first *httptest.Server, secondHits *atomic.Int32) {
	t.Helper()
	secondHits = &atomic.Int32{}
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secondHits.Add(1)
		_, _ = w.Write([]byte(`{"version":"9.9.9","server_id":"NSECRET","metadata":{"kubenats.io/config":"x"}}`))
	}))
	t.Cleanup(second.Close)
	first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, second.URL+r.URL.Path, status)
	}))
	t.Cleanup(first.Close)
	return first, secondHits
}

// TestMonitorRedirectsAreNotFollowed: a server that answers /varz with a
// redirect must not send the operator to the address it names (loopback,
// a metadata service, another tenant's monitor port), nor have the answer
// found there taken as its own. Every way the operator builds a monitor
// client is tried, and a plain client a caller made by hand too.
//
// Careless variant caught: today's main (http.Client with the default
// CheckRedirect, through FetchVersion and FetchLoaded) followed the
// redirect: the second server was hit and 9.9.9 came back as the version.
func TestMonitorRedirectsAreNotFollowed(t *testing.T) {
	clients := map[string]*http.Client{
		"NewClient":         NewClient(2*time.Second, NewTransport(nil)),
		"a client by hand":  {Timeout: 2 * time.Second},
		"following clients": {Timeout: 2 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return nil }},
	}
	for _, status := range []int{http.StatusFound, http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for name, hc := range clients {
			first, hits := redirectingServers(t, status)
			v, err := FetchVersion(context.Background(), hc, first.URL+"/varz")
			if !errors.Is(err, ErrRedirect) || v != "" {
				t.Errorf("%s, %d: FetchVersion = %q, %v; want %v", name, status, v, err, ErrRedirect)
			}
			if _, err := FetchLoaded(context.Background(), hc, first.URL+"/varz"); err == nil {
				t.Errorf("%s, %d: FetchLoaded took the redirected answer", name, status)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("%s, %d: the redirect target was hit %d times", name, status, n)
			}
		}
	}
}

// TestMonitorTransportDialsOnlyThePinnedAddress: the transport of every
// monitor client dials the address its request was made for and nothing
// else, so that a redirect followed by mistake (or a proxy from the
// environment) fails at the dial. Careless variant caught: a transport
// with a plain DialContext, which dials whatever the client asks.
func TestMonitorTransportDialsOnlyThePinnedAddress(t *testing.T) {
	first, hits := redirectingServers(t, http.StatusFound)
	var dialed []string
	tr := NewTransport(func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	})
	// A client that follows redirects, over the pinned transport.
	following := &http.Client{Timeout: 2 * time.Second, Transport: tr}
	req, err := NewRequest(context.Background(), first.URL+"/varz")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := following.Do(req)
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("the redirect was followed to a second address (status %s)", resp.Status)
	}
	if !strings.Contains(err.Error(), "refusing to dial") || hits.Load() != 0 {
		t.Errorf("error %v, second server hit %d times", err, hits.Load())
	}
	if len(dialed) != 1 || dialed[0] != first.Listener.Addr().String() {
		t.Errorf("dialed %q, want only %s", dialed, first.Listener.Addr())
	}
	// A request made without NewRequest is pinned to nothing: refused.
	plain, _ := http.NewRequest(http.MethodGet, first.URL+"/varz", nil)
	if resp, err := following.Do(plain); err == nil {
		_ = resp.Body.Close()
		t.Error("a request without a pinned address was dialed")
	}
}

// TestServerVersionMustLookLikeOne: what a server says its version is
// reaches status.serverVersion only when it looks like a version.
// Careless variant caught: today's main returned /varz's version as is
// (a server could put any text of up to 1 MiB into the status).
func TestServerVersionMustLookLikeOne(t *testing.T) {
	for v, want := range map[string]bool{
		"2.15.3":                            true,
		"v2.15.3":                           true,
		"2.12.0-RC.3":                       true,
		"2.11.0-beta-2":                     true,
		"":                                  false,
		"2.15":                              false,
		"2.15.3+build.7":                    false,
		"2.15.3 ":                           false,
		"2.15.3\nReady":                     false,
		"2.15.3-":                           false,
		"2.15.3-a..b":                       false,
		"http://10.0.0.1":                   false,
		"2.15.3-" + strings.Repeat("a", 64): false,
	} {
		if got := ValidVersion(v); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", v, got, want)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"version":"2.15.3\nAWS_SECRET_ACCESS_KEY=abc"}`))
	}))
	defer srv.Close()
	if v, err := FetchVersion(context.Background(), NewClient(time.Second, NewTransport(nil)), srv.URL+"/varz"); err == nil || v != "" {
		t.Errorf("FetchVersion = %q, %v; want an error", v, err)
	} else if strings.Contains(err.Error(), "\n") {
		t.Errorf("the error carries the server's text unsanitized: %q", err)
	}
}

func TestShownBoundsAndSanitizesNames(t *testing.T) {
	for in, want := range map[string]string{
		"ORDERS":                   "ORDERS",
		"orders.eu-west_1":         "orders.eu-west_1",
		"":                         `""`,
		"a\nReady: True":           "a?Ready:?True",
		"\x1b[31mred":              "?[31mred",
		`quote"d`:                  "quote?d",
		"ünï":                      "??n??", // byte by byte
		strings.Repeat("x", 65):    strings.Repeat("x", 64) + "...",
		strings.Repeat("x", 64):    strings.Repeat("x", 64),
		strings.Repeat("y", 1<<20): strings.Repeat("y", 64) + "...",
	} {
		if got := Shown(in); got != want {
			t.Errorf("Shown(%.20q) = %q, want %q", in, got, want)
		}
	}
}
