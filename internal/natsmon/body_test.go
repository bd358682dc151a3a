package natsmon

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostileBodyBytes is how much a hostile server sends before it gives up:
// sixteen times the /jsz cap, so a reader without a cap allocates it all
// (and fails the bound below) instead of being killed for memory.
const hostileBodyBytes = 16 * maxJSZBody

// endlessServer answers every request with 200 and a JSON value that never
// ends: an opening brace and a string of hostileBodyBytes letters.
func endlessServer(t *testing.T) (ip string, port int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version": "`))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for sent := 0; sent < hostileBodyBytes; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client hung up, as it should
			}
		}
	}))
	t.Cleanup(srv.Close)
	host, portText, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ = strconv.Atoi(portText)
	return host, port
}

// allocatedBy runs f and returns how many bytes it allocated.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestMonitorBodiesAreBounded(t *testing.T) {
	ip, port := endlessServer(t)
	base := "http://" + net.JoinHostPort(ip, strconv.Itoa(port))
	// No client timeout: the cap alone must end the read.
	client := &http.Client{}
	for _, tc := range []struct {
		name  string
		limit int64
		fetch func(ctx context.Context) error
	}{
		{"varz", maxVarzBody, func(ctx context.Context) error {
			_, err := FetchVersion(ctx, client, base+"/varz")
			return err
		}},
		{"jsz totals", maxVarzBody, func(ctx context.Context) error {
			_, err := FetchStoreUse(ctx, client, base+StoreQuery)
			return err
		}},
		{"jsz", maxJSZBody, func(ctx context.Context) error {
			_, err := FetchJSZ(ctx, client, base+JSZQuery)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var err error
			grew := allocatedBy(func() { err = tc.fetch(ctx) })
			if err == nil || (!strings.Contains(err.Error(), "larger than") && !strings.Contains(err.Error(), "longer than")) {
				t.Fatalf("fetch = %v, want the size refusal (of the body, or of the one string it holds)", err)
			}
			// The decoder's buffer doubles as it fills: a few times the cap.
			if limit := uint64(4*tc.limit + 8<<20); grew > limit {
				t.Errorf("the fetch allocated %d MiB, want at most %d MiB", grew>>20, limit>>20)
			}
		})
	}
}

func TestMonitorBodyWithinTheCapDecodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"version": "2.15.3", "padding": "` + strings.Repeat("x", maxVarzBody/2) + `"}`))
	}))
	defer srv.Close()
	got, err := FetchVersion(context.Background(), srv.Client(), srv.URL+"/varz")
	if err != nil || got != "2.15.3" {
		t.Fatalf("FetchVersion = %q, %v", got, err)
	}
}
