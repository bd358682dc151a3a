package jetstream

import (
	"errors"
	"sync"

	"github.com/kubenats/kubenats/internal/serverbudget"
)

// Every connection the guard stands in draws on the process-wide budgets
// of internal/serverbudget: one connection of serverbudget.Connections,
// counted to the namespace whose servers it reaches, for as long as its
// nats.Conn lives; and, for what it receives beyond its base buffers
// (keepBuffer), bytes of serverbudget.Memory in that namespace's share,
// reserved before they are read and given back once nats.go has taken
// them. A connection whose server sends a message the budget has no room
// for is closed: the message is never buffered.

// errNoRoom: the operation the server is sending does not fit what the
// connection may take of the server memory budget now.
var errNoRoom = errors.New("the operator's memory budget for what servers send has no room for the server's message")

// wireCost is what a stream whose received bytes take capacity capIn
// reserves: those bytes beyond keepBuffer twice, as received and as
// encoded for nats.go (whose own copy replaces the received one: decode
// lets the large buffer go before nats.go reads).
func wireCost(capIn int) int64 { return 2 * int64(max(0, capIn-keepBuffer)) }

// wireLease is what one guarded connection holds of the memory budget.
// Its stream raises it before reading (from nats.go's read loop) and
// lowers it when nats.go comes back for more; closing the connection
// gives it all back, from whichever goroutine closes it.
type wireLease struct {
	budget *serverbudget.Budget
	ns     string

	mu     sync.Mutex
	held   int64
	closed bool
}

func newWireLease(budget *serverbudget.Budget, ns string) *wireLease {
	if budget == nil {
		budget = serverbudget.Memory
	}
	return &wireLease{budget: budget, ns: ns}
}

// hold makes what the lease holds n: lowering always works, raising only
// while the budget has room (and the connection is open).
func (l *wireLease) hold(n int64) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case n > l.held && l.closed:
		return false
	case n > l.held:
		if !l.budget.TryTake(l.ns, n-l.held) {
			return false
		}
	case n < l.held:
		l.budget.Give(l.ns, l.held-n)
	}
	l.held = n
	return true
}

// close gives back all the lease holds, for good.
func (l *wireLease) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.budget.Give(l.ns, l.held)
	l.held, l.closed = 0, true
}

// openConnection takes a connection of conns (the process-wide count when
// nil) for namespace ns's servers.
func openConnection(conns *serverbudget.Budget, ns string) (done func(), err error) {
	if conns == nil {
		conns = serverbudget.Connections
	}
	return serverbudget.OpenConnection(conns, ns)
}
