package jetstream

import (
	"crypto/tls"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/serverbudget"
)

// Guard is how a connection kubenats makes outside the pool is guarded:
// the system account's short connections to a NatsCluster's pods, and the
// account controller's. The servers run the image a tenant chose and
// answer what they like, so these connections stand behind the same guard
// as the pool's, under the same budgets: one connection of the operator's
// allowance for the cluster's namespace, and reservations in the memory
// budget for what the servers send beyond the base buffers.
type Guard struct {
	// TLS, when set, is the TLS the connection wants (verified under the
	// host name nats.go dials); TLSFirst makes the handshake before INFO.
	TLS      *tls.Config
	TLSFirst bool
	// PlaintextHosts are hosts that may answer without offering TLS all
	// the same (servers started before they served it); TLS offered is
	// always taken.
	PlaintextHosts map[string]bool
	// Transport, when set, opens the TCP connections (to map server names
	// to addresses).
	Transport nats.CustomDialer
	// Largest is the largest message the connection takes: MaxSystemReply
	// for the system account's server pings, and less for what needs less
	// (MaxSystemAnswer for requests to one server, the account
	// controller's accounts.MaxMessage). maxAPIReply when zero.
	Largest int
	// Namespace is the namespace whose servers these are: the connection
	// counts to its share of the connections and of the memory budget.
	Namespace string
	// Memory and Connections, when set, replace the process-wide budgets
	// (serverbudget.Memory, serverbudget.Connections): tests.
	Memory, Connections *serverbudget.Budget
}

// MaxSystemAnswer bounds one message on a system account connection that
// sends requests to single servers (a reload, a JetStream API call for a
// scale-down): each answer is one server's small JSON object (its info
// and metadata, or an API response), a few KiB. Only the pings that
// collect every server's JetStream view need MaxSystemReply.
const MaxSystemAnswer = maxAPIReply

// Connect connects to urls (comma-separated) behind the guard, with opts,
// once the operator's allowance has a connection free for g.Namespace:
// serverbudget.ErrConnectionLimit otherwise. The connection gives it back
// when it closes (Connect sets the ClosedHandler).
func Connect(urls string, g Guard, opts ...nats.Option) (*nats.Conn, error) {
	done, err := openConnection(g.Connections, g.Namespace)
	if err != nil {
		return nil, err
	}
	opts = append(append(GuardOptions(g), opts...), nats.ClosedHandler(func(*nats.Conn) { done() }))
	nc, err := nats.Connect(urls, opts...)
	if err != nil {
		done()
		return nil, err
	}
	return nc, nil
}

// GuardOptions put a connection behind the guard: the guard dials, reads
// and checks everything the servers send, reserves what it holds of it in
// the memory budget, and hands nats.go only the messages it asked for
// (deliveries: the one answer to each request it sent, and what its own
// subscriptions receive), as on the pool's connections. The operator
// connects with Connect, which also takes the connection's place in the
// allowance; tests use the options alone.
func GuardOptions(o Guard) []nats.Option {
	largest := o.Largest
	if largest <= 0 {
		largest = maxAPIReply
	}
	largest = min(largest, MaxSystemReply)
	g := &guardDialer{tls: o.TLS, wantTLS: o.TLS != nil, plaintextHosts: o.PlaintextHosts, tlsFirst: o.TLSFirst && o.TLS != nil,
		transport: o.Transport, maxMsg: largest, deliveries: newDeliveries(nil), memory: o.Memory, namespace: o.Namespace}
	// IgnoreDiscoveredServers: the servers run spec.image, which may tell
	// of any address in connect_urls; the operator dials only its pods.
	return []nats.Option{nats.SetCustomDialer(g), nats.SkipHostLookup(), nats.IgnoreDiscoveredServers()}
}
