// Package testnats starts real nats-servers with JetStream inside a test
// process: the one way every test tier gets a server of its own.
package testnats

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start runs a nats-server with JetStream on 127.0.0.1:port (0: a free
// port), its store in a fresh temporary directory unless edit sets one, and
// stops it when the test ends. edit adjusts the options (users, store).
func Start(tb testing.TB, port int, edit ...func(*server.Options)) *server.Server {
	tb.Helper()
	if port == 0 {
		port = FreePort(tb)
	}
	opts := &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: tb.TempDir(), NoLog: true, NoSigs: true}
	for _, e := range edit {
		e(opts)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats-server did not start")
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// FreePort is a loopback port nothing listens on, right after it returns.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// URL is the server's client URL.
func URL(s *server.Server) string { return "nats://" + s.Addr().String() }
