package envtest_test

import (
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/test/testnats"
)

// natsServer starts a real nats-server with JetStream in this process,
// stopped when the test ends. port 0 picks a free one (freePort).
func natsServer(t *testing.T, port int) *server.Server {
	if port == 0 {
		port = freePort(t)
	}
	return testnats.Start(t, port)
}

// freePort is a loopback port nothing listens on, that no other test of
// this process is given: tests that run at once stop a server and start
// it again on its port, or name a port that must stay closed, and the
// Streams of a test that ended keep dialling their server's port. It is
// taken below the kernel's range of ports for binds to port 0 and for
// outgoing connections (32768 and up by default), so that no listener of
// a test running beside, nor the API server's clients, takes it meanwhile.
func freePort(t *testing.T) int {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	for range 1000 {
		p := firstPort + rand.IntN(portCount)
		if ports.given[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // another process's
		}
		_ = l.Close()
		ports.given[p] = true
		return p
	}
	t.Fatalf("no free port in %d-%d", firstPort, firstPort+portCount-1)
	return 0
}

const firstPort, portCount = 20000, 10000

var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// clusterDNS maps the host names a NatsCluster's endpoint uses to test
// servers. The operator's dialer resolves through it, the way cluster DNS
// would in a real cluster.
var clusterDNS = struct {
	sync.Mutex
	hosts map[string]string
}{hosts: map[string]string{}}

func mapHost(t *testing.T, hostport, addr string) {
	clusterDNS.Lock()
	clusterDNS.hosts[hostport] = addr
	clusterDNS.Unlock()
	t.Cleanup(func() {
		clusterDNS.Lock()
		delete(clusterDNS.hosts, hostport)
		clusterDNS.Unlock()
	})
}

// testDialer dials mapped names at their test server, anything else as is.
func testDialer(network, address string) (net.Conn, error) {
	clusterDNS.Lock()
	to, ok := clusterDNS.hosts[address]
	clusterDNS.Unlock()
	if ok {
		address = to
	}
	return (&net.Dialer{Timeout: 2 * time.Second}).Dial(network, address)
}

func serverURL(s *server.Server) string { return testnats.URL(s) }
