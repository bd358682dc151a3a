package e2ekit

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// The suite's parallel tests run after its sequential ones, Options.Parallel
// at a time. Go starts them in the order their goroutines wake when the
// sequential part ends, which is no order at all: the longest (a
// scale-down that waits out nats-server's five-minute rejoin window) often
// started last, and the suite waited for it alone. Parallel hands the
// slots out longest first instead, the classic way to pack jobs on a few
// machines so that the last one ends soon after the others.
var slots = &scheduler{}

// scheduler grants the parallel slots. Go's own -parallel is set above the
// number of parallel tests (Run), so that every one of them reaches
// acquire and the longest can be picked among all of them.
type scheduler struct {
	mu   sync.Mutex
	cond *sync.Cond
	// slots is how many tests run at once; zero leaves it to go test.
	slots int
	// pending counts tests that called Parallel and have no slot yet;
	// waiting are those of them that reached acquire.
	pending int
	waiting []*slotWaiter
	running int
}

type slotWaiter struct {
	expected time.Duration
	granted  bool
}

// schedule makes the scheduler hand out n slots.
func (s *scheduler) schedule(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slots, s.cond = n, sync.NewCond(&s.mu)
}

// Parallel is t.Parallel for a suite run by Run: t waits for the
// sequential tests, then for a slot, which goes to the test expected to
// take longest among those waiting. expected is about what the test took
// in CI. The time go test reports for t includes its wait for a slot
// (logged when it is more than a second).
//
// Only top-level tests: a subtest resumes before the suite's sequential
// tests end, and would wait for the top-level ones still held there.
func Parallel(t *testing.T, expected time.Duration) {
	t.Helper()
	if strings.Contains(t.Name(), "/") {
		t.Fatal("e2ekit.Parallel is for top-level tests; a subtest calls t.Parallel")
	}
	s := slots
	s.mu.Lock()
	scheduled := s.slots > 0
	if scheduled {
		s.pending++
	}
	s.mu.Unlock()
	t.Parallel()
	if !scheduled {
		return
	}
	began := time.Now()
	s.acquire(expected)
	t.Cleanup(s.release)
	if waited := time.Since(began); waited > time.Second {
		t.Logf("waited %s for a parallel slot", waited.Round(time.Second))
	}
}

func (s *scheduler) acquire(expected time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &slotWaiter{expected: expected}
	s.waiting = append(s.waiting, w)
	s.grant()
	for !w.granted {
		s.cond.Wait()
	}
}

func (s *scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	s.grant()
}

// grant fills the free slots, longest expected first, once every pending
// test is waiting: until then one not yet woken might be the longest.
func (s *scheduler) grant() {
	if len(s.waiting) < s.pending {
		return
	}
	for s.running < s.slots && len(s.waiting) > 0 {
		longest := 0
		for i, w := range s.waiting {
			if w.expected > s.waiting[longest].expected {
				longest = i
			}
		}
		s.waiting[longest].granted = true
		s.waiting = append(s.waiting[:longest], s.waiting[longest+1:]...)
		s.pending--
		s.running++
	}
	s.cond.Broadcast()
}
