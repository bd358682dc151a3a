package natsmon

import (
	"strings"
	"testing"
	"time"
)

// TestLoadedTopologyCertificates: the gateway's and the leafnode
// listener's certificate expiries, as /varz reports them, are marks of
// their own, so a renewed certificate of either is reloaded. Careless
// variant caught: reading only the client and route expiries (a renewed
// gateway certificate would then never be reloaded).
func TestLoadedTopologyCertificates(t *testing.T) {
	body := `{"server_id":"N1","now":"2026-12-02T18:00:00Z","config_load_time":"2026-12-02T17:00:00Z",
		"gateway":{"name":"east","tls_cert_not_after":"2027-01-01T00:00:00Z"},
		"leaf":{"port":7422,"tls_cert_not_after":"2027-02-01T00:00:00Z"}}`
	l, err := decodeLoaded(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"gateway": "2027-01-01T00:00:00Z", "leafnodes": "2027-02-01T00:00:00Z"}
	for listener, at := range want {
		if got := l.CertNotAfter[listener].UTC().Format(time.RFC3339); got != at {
			t.Errorf("%s: %s, want %s", listener, got, at)
		}
	}
}
