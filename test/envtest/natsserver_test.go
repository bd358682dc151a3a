package envtest_test

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/test/testnats"
)

// natsServer starts a real nats-server with JetStream in this process,
// stopped when the test ends. port 0 picks a free one.
func natsServer(t *testing.T, port int) *server.Server { return testnats.Start(t, port) }

func freePort(t *testing.T) int { return testnats.FreePort(t) }

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
