package serverbudget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTryTakeHoldsEveryLevel: a reservation fits its budget's limit, its
// namespace's share and its parent's limit, or is refused and takes
// nothing. Careless variants: a share that is not checked (ns a's third
// reservation is granted), a child that does not count in its parent (the
// parent's last reservation is granted past its limit), a refusal that
// keeps what it took at a lower level (the child is not whole again).
func TestTryTakeHoldsEveryLevel(t *testing.T) {
	parent := New(12, 4)
	child := parent.Within(6)
	steps := []struct {
		name string
		b    *Budget
		ns   string
		n    int64
		want bool
	}{
		{"within the share", parent, "a", 2, true},
		{"up to the share", parent, "a", 2, true},
		{"past the share", parent, "a", 1, false},
		{"another namespace", parent, "b", 3, true},
		{"no namespace: no share", parent, "", 1, true},
		{"a child within its limit and its parent's", child, "", 3, true},
		{"past the parent's limit, within the child's", child, "", 2, false},
		{"what is left of the parent", child, "", 1, true},
		{"the parent is full", parent, "c", 1, false},
	}
	for _, s := range steps {
		if got := s.b.TryTake(s.ns, s.n); got != s.want {
			t.Fatalf("%s: TryTake(%q, %d) = %v, want %v", s.name, s.ns, s.n, got, s.want)
		}
	}
	if got := parent.Held(); got != 12 {
		t.Errorf("the parent holds %d, want 12", got)
	}
	if got := child.Held(); got != 4 {
		t.Errorf("the child holds %d, want 4 (a refused reservation took nothing)", got)
	}
	child.Give("", 4)
	parent.Give("a", 4)
	if got, byA := parent.Held(), parent.HeldBy("a"); got != 4 || byA != 0 {
		t.Errorf("after giving back: the parent holds %d (a: %d), want 4 (a: 0)", got, byA)
	}
}

// TestTakeWaitsAndIsGrantedInOrder: a reservation that waits is granted
// when room comes back, before a later one of the same budget; it never
// stops a TryTake that fits (a message must not be refused because a
// caller waits); and one that ends unfulfilled takes nothing. Careless
// variants: waiters that block tries (as x/sync/semaphore's do), grants
// out of order, a cancelled waiter left in the queue.
func TestTakeWaitsAndIsGrantedInOrder(t *testing.T) {
	b := New(4, 0)
	if !b.TryTake("", 3) {
		t.Fatal("the first reservation was refused")
	}
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- b.Take(context.Background(), "", 3) }()
	waitQueued(t, b, 1)
	go func() { second <- b.Take(context.Background(), "", 1) }()
	waitQueued(t, b, 2)
	// The second would fit now, but waits behind the first.
	select {
	case err := <-second:
		t.Fatalf("a later reservation overtook an earlier one: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if !b.TryTake("x", 1) {
		t.Fatal("a reservation that does not wait was refused because others wait")
	}
	b.Give("x", 1)
	b.Give("", 3)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := b.Held(); got != 4 {
		t.Fatalf("holds %d, want 4", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- b.Take(ctx, "", 2) }()
	waitQueued(t, b, 1)
	cancel()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait = %v", err)
	}
	b.Give("", 4)
	if got := b.Held(); got != 0 {
		t.Fatalf("the cancelled reservation holds %d after all was given back", got)
	}
	if n := queued(b); n != 0 {
		t.Fatalf("%d reservations still wait", n)
	}
}

// TestTakeRefusesWhatNeverFits: a reservation larger than a limit it
// falls under fails at once rather than waiting for ever.
func TestTakeRefusesWhatNeverFits(t *testing.T) {
	b := New(8, 4)
	if err := b.Within(2).Take(context.Background(), "", 3); !errors.Is(err, ErrNeverFits) {
		t.Errorf("past the child's limit: %v", err)
	}
	if err := b.Take(context.Background(), "a", 5); !errors.Is(err, ErrNeverFits) {
		t.Errorf("past the share: %v", err)
	}
}

// TestLimitsResolve: the flags' zero values take the defaults, and sizes
// the operator cannot run with are refused at start.
func TestLimitsResolve(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      Limits
		want    Limits
		wantErr bool
	}{
		{"defaults", Limits{}, Limits{Memory: DefaultMemory, MemoryPerNamespace: DefaultMemory / 2, Connections: DefaultConnections, ConnectionsPerNamespace: DefaultConnectionsPerNamespace}, false},
		{"a namespace's memory is half the budget given", Limits{Memory: 100 << 20}, Limits{Memory: 100 << 20, MemoryPerNamespace: 50 << 20, Connections: DefaultConnections, ConnectionsPerNamespace: DefaultConnectionsPerNamespace}, false},
		{"few connections: the share is all of them", Limits{Connections: 4}, Limits{Memory: DefaultMemory, MemoryPerNamespace: DefaultMemory / 2, Connections: 4, ConnectionsPerNamespace: 4}, false},
		{"a budget smaller than a ping's answers", Limits{Memory: 16 << 20}, Limits{}, true},
		{"a share past the budget", Limits{MemoryPerNamespace: DefaultMemory + 1}, Limits{}, true},
		{"a connection share past the connections", Limits{Connections: 8, ConnectionsPerNamespace: 9}, Limits{}, true},
		{"no connection", Limits{Connections: -1}, Limits{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Resolved()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Resolved() error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("Resolved() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestOpenConnectionSaysWhichLimit: a refused connection names the limit
// it met, and its done gives back one place however often it is called.
func TestOpenConnectionSaysWhichLimit(t *testing.T) {
	conns := New(3, 2)
	a1, err := OpenConnection(conns, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenConnection(conns, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenConnection(conns, "a"); !errors.Is(err, ErrConnectionLimit) || !contains(err.Error(), `namespace "a"`) {
		t.Fatalf("past the namespace's share: %v", err)
	}
	if _, err := OpenConnection(conns, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenConnection(conns, "c"); !errors.Is(err, ErrConnectionLimit) || !contains(err.Error(), "in all") {
		t.Fatalf("past the limit: %v", err)
	}
	a1()
	a1()
	if got := conns.Held(); got != 2 {
		t.Fatalf("holds %d connections after one closed twice, want 2", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func queued(b *Budget) int {
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	return b.tree.waiters.Len()
}

// waitQueued waits until n reservations wait on b's tree.
func waitQueued(t *testing.T, b *Budget, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for queued(b) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d reservations wait, want %d", queued(b), n)
		}
		time.Sleep(time.Millisecond)
	}
}
