package loopback

import (
	"slices"
	"testing"
)

// TestPodLocalArgs: the metrics container's arguments as render writes
// them reach its own pod's server and listen on its own pod's address.
// Careless variant watched failing: leaving ":7777" alone, which lets the
// first pod's exporter take the port on every address and the others fail
// to start.
func TestPodLocalArgs(t *testing.T) {
	const pod = "127.0.5.7"
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"the exporter as rendered",
			[]string{"exporter", "-listen=:7777", "-monitor-url=http://127.0.0.1:8222"},
			[]string{"exporter", "-listen=127.0.5.7:7777", "-monitor-url=http://127.0.5.7:8222"}},
		{"https and localhost",
			[]string{"-monitor-url=https://localhost:8222", "-listen=localhost:7777"},
			[]string{"-monitor-url=https://127.0.5.7:8222", "-listen=127.0.5.7:7777"}},
		{"every address",
			[]string{"-listen=0.0.0.0:9000"},
			[]string{"-listen=127.0.5.7:9000"}},
		{"values that are not addresses stay",
			[]string{"-namespace=team-a", "-max-series=10000", "-tls-server-name=nats-0.nats-headless.team-a.svc", "-x=:abc"},
			[]string{"-namespace=team-a", "-max-series=10000", "-tls-server-name=nats-0.nats-headless.team-a.svc", "-x=:abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podLocalArgs(tc.in, pod); !slices.Equal(got, tc.want) {
				t.Fatalf("podLocalArgs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
