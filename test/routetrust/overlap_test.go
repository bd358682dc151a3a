// Package routetrust_test runs real nats-servers (in the test process)
// with the route TLS files the operator writes while it replaces a
// cluster's route CA, and checks that a server at any written state routes
// with one at the state before or after it: servers take the files by
// reload, each at its own moment, so neighbouring states meet in a
// running cluster.
package routetrust_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/test/poll"
)

// names are what the test's route certificates carry: the route URLs
// below dial localhost, and nats-server verifies a route it dials under
// the URL's host name, as it verifies <pod>.<headless> in a cluster.
var names = []string{"localhost"}

// state is one written content of the route TLS Secret.
type state struct {
	name string
	tls  pki.RouteTLS
}

// TestAReplacedRouteCANeverSplitsNeighbours replaces the route CA as the
// operator does (pki.PlanRouteTrust, carried out by pki.CarryRouteTrust,
// each step told that every server serves what was written before) and
// routes a server at each written state to one at the next: every pair
// must form a route. A server at the first state and one at the last
// (old CA alone, new CA alone) must not: that split is what the states in
// between bridge, and the control shows the servers do check.
//
// The careless variant, the new CA written alone as soon as it exists
// (main before this change: ca.crt and the certificate of the new CA at
// once), was run by making PlanRouteTrust's "replaced" case return the
// new CA alone: the pair "steady old" / "replaced" formed no route and
// the test failed.
func TestAReplacedRouteCANeverSplitsNeighbours(t *testing.T) {
	now := time.Now()
	oldCA, err := pki.NewCA("ns/nats route CA", now.Add(-time.Hour), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	newCA, err := pki.NewCA("ns/nats route CA", now, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	states := []state{{name: "steady old", tls: step(t, oldCA, pki.RouteTLS{}, false, now.Add(-time.Hour))}}
	for _, name := range []string{"replaced: trust both, serve old", "every server trusts both: serve new", "every server serves new: trust it alone"} {
		now = now.Add(2 * time.Second)
		states = append(states, state{name: name, tls: step(t, newCA, states[len(states)-1].tls, true, now)})
	}
	if got := len(pki.SplitCerts(states[len(states)-1].tls.Trust)); got != 1 {
		t.Fatalf("the last state trusts %d CAs, want the new one alone", got)
	}
	for i := 1; i < len(states); i++ {
		a, b := states[i-1], states[i]
		t.Run(a.name+" with "+b.name, func(t *testing.T) {
			s1, s2 := routedPair(t, a.tls, b.tls)
			poll.Until(t, 15*time.Second, func() error {
				if s1.NumRoutes() == 0 || s2.NumRoutes() == 0 {
					return fmt.Errorf("no route between a server at %q and one at %q", a.name, b.name)
				}
				return nil
			})
		})
	}
	t.Run("control: old alone with new alone splits", func(t *testing.T) {
		s1, s2 := routedPair(t, states[0].tls, states[len(states)-1].tls)
		poll.Holds(t, 3*time.Second, func() error {
			if s1.NumRoutes() != 0 || s2.NumRoutes() != 0 {
				return fmt.Errorf("a server trusting only the old CA routed with one trusting only the new")
			}
			return nil
		})
	})
}

// step is the next written state after written, as the operator decides
// and carries it out with CA ca.
func step(t *testing.T, ca pki.KeyPair, written pki.RouteTLS, serving bool, now time.Time) pki.RouteTLS {
	t.Helper()
	s := pki.PlanRouteTrust(pki.RouteTrustObservation{
		CA: ca, Names: names, Now: now, Serving: serving,
		Written: pki.RouteTLSWritten{Cert: pki.FirstCertPEM(written.Cert.Cert), Trusted: pki.SplitCerts(written.Trust), Signer: written.Signer},
	})
	out, err := pki.CarryRouteTrust(s, written.Cert, names, now)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// routedPair starts a server with files a and one with files b that
// routes to it, both from nats.conf files as the pods have them.
func routedPair(t *testing.T, a, b pki.RouteTLS) (*server.Server, *server.Server) {
	t.Helper()
	s1 := start(t, "a", a, "")
	s2 := start(t, "b", b, fmt.Sprintf("nats-route://localhost:%d", s1.ClusterAddr().Port))
	return s1, s2
}

func start(t *testing.T, name string, files pki.RouteTLS, route string) *server.Server {
	t.Helper()
	dir := t.TempDir()
	for file, content := range map[string]string{"tls.crt": files.Cert.Cert, "tls.key": files.Cert.Key, "ca.crt": files.Trust} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	routes := ""
	if route != "" {
		routes = fmt.Sprintf("routes: [%q]", route)
	}
	conf := fmt.Sprintf(`server_name: %s
listen: "127.0.0.1:-1"
cluster {
  name: nats
  listen: "127.0.0.1:-1"
  %s
  tls {
    cert_file: %q
    key_file: %q
    ca_file: %q
    verify: true
    timeout: 2
  }
}
`, name, routes, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt"))
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}
