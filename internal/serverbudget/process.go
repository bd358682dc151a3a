package serverbudget

import (
	"errors"
	"fmt"
	"sync"
)

// The process-wide budgets and their defaults, which fit the operator's
// container (128Mi, GOMEMLIMIT=110MiB in config/manager/manager.yaml): the
// operator's own heap (its caches: some 30 MiB at 2000 resources) and
// DefaultMemory stay under the soft limit, and the connections' fixed
// buffers (MaxConnectionBase each, outside the byte budget: see
// DefaultConnections) stay within the hard limit's headroom.
const (
	// DefaultMemory bounds the bytes of what servers send that the
	// operator holds at once: messages on its NATS connections while they
	// arrive and are handed to nats.go, the answers its reads wait for,
	// monitor bodies. 64 MiB is what the reads alone were given before the
	// connections came under it.
	DefaultMemory = 64 << 20
	// MinMemory is the least budget the operator runs with: the largest
	// single reservation, a system ping's answers (natsmon's
	// maxPingPending), must fit.
	MinMemory = 32 << 20

	// DefaultConnections bounds the operator's NATS connections: the
	// pool's (one per NATS system and identity in use) and the system
	// account's short ones. MaxConnectionBase each is at most 16 MiB in
	// all, beside the byte budget.
	DefaultConnections = 64
	// DefaultConnectionsPerNamespace bounds those to one namespace's
	// servers: a namespace that makes connections without end (a resource
	// per identity, a connection.servers per resource) leaves the others
	// three quarters.
	DefaultConnectionsPerNamespace = 16

	// MaxConnectionBase is what one connection may hold outside the byte
	// budget: the guard's buffers up to their base (64 KiB received, 64
	// KiB decoded), nats.go's read buffer and write buffer (32 KiB each)
	// and what nats.go copies of a message up to the base, TLS records.
	// Measured idle, a pool connection takes about 90 KiB, the embedded
	// server's side included (logged by internal/jetstream's
	// TestPoolRefusesTheConnectionPastTheNamespaceShare).
	MaxConnectionBase = 256 << 10
)

// Limits are the process-wide budgets' sizes, from the command line; a
// zero field keeps its default.
type Limits struct {
	// Memory is the byte budget; MemoryPerNamespace what one namespace's
	// servers may hold of it (half when zero).
	Memory, MemoryPerNamespace int64
	// Connections bounds the NATS connections; ConnectionsPerNamespace
	// those to one namespace's servers.
	Connections, ConnectionsPerNamespace int
}

var (
	// Memory is the one byte budget of the process: every guarded NATS
	// connection reserves from it what it receives beyond its base, before
	// reading it, and every read of servers' answers what it may hold.
	Memory = New(DefaultMemory, DefaultMemory/2)
	// Connections counts the NATS connections the operator holds.
	Connections = New(DefaultConnections, DefaultConnectionsPerNamespace)

	configured sync.Mutex
)

// Resolved is l with its defaults filled in, or why it cannot be used.
func (l Limits) Resolved() (Limits, error) {
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.MemoryPerNamespace == 0 {
		l.MemoryPerNamespace = l.Memory / 2
	}
	if l.Connections == 0 {
		l.Connections = DefaultConnections
	}
	if l.ConnectionsPerNamespace == 0 {
		l.ConnectionsPerNamespace = min(DefaultConnectionsPerNamespace, l.Connections)
	}
	switch {
	case l.Memory < MinMemory:
		return l, fmt.Errorf("the server memory budget must be at least %d MiB (a system ping's answers), not %d bytes", MinMemory>>20, l.Memory)
	case l.MemoryPerNamespace < 0 || l.MemoryPerNamespace > l.Memory:
		return l, fmt.Errorf("a namespace's share of the server memory budget must be between 1 byte and the budget (%d), not %d", l.Memory, l.MemoryPerNamespace)
	case l.Connections < 1:
		return l, fmt.Errorf("the operator needs at least one NATS connection, not %d", l.Connections)
	case l.ConnectionsPerNamespace < 1 || l.ConnectionsPerNamespace > l.Connections:
		return l, fmt.Errorf("a namespace's share of the NATS connections must be between 1 and %d, not %d", l.Connections, l.ConnectionsPerNamespace)
	}
	return l, nil
}

// Configure sizes the process-wide budgets (once at start; a test that
// builds the operator again sizes them again).
func Configure(l Limits) error {
	l, err := l.Resolved()
	if err != nil {
		return err
	}
	configured.Lock()
	defer configured.Unlock()
	Memory.SetLimits(l.Memory, l.MemoryPerNamespace)
	Connections.SetLimits(int64(l.Connections), int64(l.ConnectionsPerNamespace))
	return nil
}

// ErrConnectionLimit: the operator holds as many NATS connections as it
// allows, in all or to one namespace's servers. A resource that needs one
// more says so in its status and tries again later.
var ErrConnectionLimit = errors.New("the operator holds as many NATS connections as it allows")

// OpenConnection takes one connection of conns for the servers of
// namespace ns; done gives it back (once, however often it is called).
func OpenConnection(conns *Budget, ns string) (done func(), err error) {
	if !conns.TryTake(ns, 1) {
		limit, share := conns.Limits()
		if share > 0 && conns.HeldBy(ns) >= share {
			return nil, fmt.Errorf("%w: %d to the servers of namespace %q (--server-connections-per-namespace)", ErrConnectionLimit, share, ns)
		}
		return nil, fmt.Errorf("%w: %d in all (--server-connections)", ErrConnectionLimit, limit)
	}
	var once sync.Once
	return func() { once.Do(func() { conns.Give(ns, 1) }) }, nil
}
