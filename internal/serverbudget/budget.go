// Package serverbudget bounds what the NATS servers the operator talks to
// can make it hold. Whoever runs a server decides what it sends (a tenant's
// spec.image, a tenant's connection.servers), so the operator's memory must
// not follow it: the bytes of the messages and answers it reads come out of
// one budget for the whole process, taken before they are read, and its
// connections to servers are counted, in all and per namespace.
//
// One type does both (Budget: an amount that reservations take and give
// back), and every guarded connection (the JetStream pool's, the system
// account's, the account controller's) and every answer read from a
// server's monitor port draws on the same two process-wide budgets
// (process.go).
package serverbudget

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
)

// Budget is an amount (bytes, or connections) that reservations take and
// give back: within its own limit, within a share per namespace when it has
// one, and within its parent's, all at once or not at all.
//
// A reservation either waits for room (Take: a caller that can wait, such
// as a pass about to read answers) or does not (TryTake: a message whose
// bytes are arriving, which is refused rather than held). A waiting
// reservation never blocks one that does not wait: a message refused
// because a caller waits for room would be a message lost for nothing.
type Budget struct {
	tree   *tree
	parent *Budget
	limit  int64
	// share bounds what one namespace's reservations hold; 0: no share.
	share int64
	held  int64
	byNS  map[string]int64
}

// tree is the lock and the waiting reservations of a budget and the
// budgets within it.
type tree struct {
	mu      sync.Mutex
	waiters list.List // of *waiter, in order of arrival
}

type waiter struct {
	b     *Budget
	ns    string
	n     int64
	ready chan struct{}
}

// ErrNeverFits: a reservation larger than a limit it falls under.
var ErrNeverFits = errors.New("the reservation is larger than the operator's budget for it")

// New is a budget of limit, of which one namespace may hold share (0: no
// share).
func New(limit, share int64) *Budget {
	return &Budget{tree: &tree{}, limit: limit, share: share, byNS: map[string]int64{}}
}

// Within is a budget of limit inside b: what it holds, b holds too.
func (b *Budget) Within(limit int64) *Budget {
	return &Budget{tree: b.tree, parent: b, limit: limit, byNS: map[string]int64{}}
}

// TryTake takes n for namespace ns ("" for none) if there is room now.
func (b *Budget) TryTake(ns string, n int64) bool {
	if n <= 0 {
		return true
	}
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	if !b.fits(ns, n) {
		return false
	}
	b.add(ns, n)
	return true
}

// Take takes n for namespace ns, waiting for room until ctx ends. The
// reservations of one budget are granted in the order they came.
func (b *Budget) Take(ctx context.Context, ns string, n int64) error {
	if n <= 0 {
		return nil
	}
	b.tree.mu.Lock()
	if b.never(ns, n) {
		b.tree.mu.Unlock()
		return fmt.Errorf("%w (%d)", ErrNeverFits, n)
	}
	if !b.tree.queued(b) && b.fits(ns, n) {
		b.add(ns, n)
		b.tree.mu.Unlock()
		return nil
	}
	w := &waiter{b: b, ns: ns, n: n, ready: make(chan struct{})}
	e := b.tree.waiters.PushBack(w)
	b.tree.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.tree.mu.Lock()
	select {
	case <-w.ready: // granted as the wait ended: given back
		b.sub(ns, n)
	default:
		b.tree.waiters.Remove(e)
	}
	b.tree.grant()
	b.tree.mu.Unlock()
	return ctx.Err()
}

// Give gives back n that namespace ns took.
func (b *Budget) Give(ns string, n int64) {
	if n <= 0 {
		return
	}
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	b.sub(ns, n)
	b.tree.grant()
}

// Held is what the budget's reservations hold, in all.
func (b *Budget) Held() int64 {
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	return b.held
}

// HeldBy is what namespace ns's reservations hold.
func (b *Budget) HeldBy(ns string) int64 {
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	return b.byNS[ns]
}

// Limits are the budget's limit and share.
func (b *Budget) Limits() (limit, share int64) {
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	return b.limit, b.share
}

// SetLimits changes the budget's limit and share (at start, from the
// command line); what is held stays held.
func (b *Budget) SetLimits(limit, share int64) {
	b.tree.mu.Lock()
	defer b.tree.mu.Unlock()
	b.limit, b.share = limit, share
	b.tree.grant()
}

// fits reports whether n more for ns fits every level. tree.mu is held.
func (b *Budget) fits(ns string, n int64) bool {
	for l := b; l != nil; l = l.parent {
		if l.held+n > l.limit || (l.share > 0 && ns != "" && l.byNS[ns]+n > l.share) {
			return false
		}
	}
	return true
}

// never reports whether n could not fit even with nothing held.
func (b *Budget) never(ns string, n int64) bool {
	for l := b; l != nil; l = l.parent {
		if n > l.limit || (l.share > 0 && ns != "" && n > l.share) {
			return true
		}
	}
	return false
}

func (b *Budget) add(ns string, n int64) {
	for l := b; l != nil; l = l.parent {
		l.held += n
		if ns != "" {
			l.byNS[ns] += n
		}
	}
}

// sub gives back n; never below zero, whatever a caller's mistake.
func (b *Budget) sub(ns string, n int64) {
	for l := b; l != nil; l = l.parent {
		l.held = max(0, l.held-n)
		if ns != "" {
			if left := l.byNS[ns] - n; left > 0 {
				l.byNS[ns] = left
			} else {
				delete(l.byNS, ns)
			}
		}
	}
}

// queued reports whether a reservation of b waits. tree.mu is held.
func (t *tree) queued(b *Budget) bool {
	for e := t.waiters.Front(); e != nil; e = e.Next() {
		if e.Value.(*waiter).b == b {
			return true
		}
	}
	return false
}

// grant grants the waiting reservations that now fit, in order; one that
// does not fit holds back the later ones of its own budget only, so that
// it is not overtaken for ever, and a budget at its limit does not hold up
// the others. tree.mu is held.
func (t *tree) grant() {
	var blocked map[*Budget]bool
	for e := t.waiters.Front(); e != nil; {
		next := e.Next()
		w := e.Value.(*waiter)
		switch {
		case blocked[w.b]:
		case w.b.fits(w.ns, w.n):
			w.b.add(w.ns, w.n)
			t.waiters.Remove(e)
			close(w.ready)
		default:
			if blocked == nil {
				blocked = map[*Budget]bool{}
			}
			blocked[w.b] = true
		}
		e = next
	}
}
