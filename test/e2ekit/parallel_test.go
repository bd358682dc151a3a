package e2ekit

import (
	"testing"
	"time"
)

// TestSlotsGoLongestFirstOnceAllArrive: with two slots and five tests
// arriving shortest first, nothing starts until all five wait; then the
// two longest start, and each freed slot goes to the longest still
// waiting. Careless variants watched failing: granting on arrival (the two
// shortest start first), and granting in arrival order.
func TestSlotsGoLongestFirstOnceAllArrive(t *testing.T) {
	s := &scheduler{}
	s.schedule(2)
	arrivals := []time.Duration{10, 20, 30, 40, 50}
	s.mu.Lock()
	s.pending = len(arrivals)
	s.mu.Unlock()
	state := func() (waiting, running int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.waiting), s.running
	}

	started := make(chan time.Duration, len(arrivals))
	finish := map[time.Duration]chan struct{}{}
	for i, e := range arrivals {
		finish[e] = make(chan struct{})
		go func() {
			s.acquire(e)
			started <- e
			<-finish[e]
			s.release()
		}()
		if i < len(arrivals)-1 {
			// Each arrives before the next; none starts while one is
			// still to come.
			eventually(t, func() bool { w, r := state(); return w == i+1 && r == 0 })
		}
	}
	first := map[time.Duration]bool{<-started: true, <-started: true}
	if !first[50] || !first[40] {
		t.Fatalf("started first %v, want the two longest", first)
	}
	for _, step := range []struct{ done, next time.Duration }{{50, 30}, {40, 20}, {30, 10}} {
		close(finish[step.done])
		if got := <-started; got != step.next {
			t.Fatalf("after %d ended, %d started, want %d", step.done, got, step.next)
		}
		if _, r := state(); r > 2 {
			t.Fatalf("%d running on two slots", r)
		}
	}
	close(finish[20])
	close(finish[10])
	eventually(t, func() bool { w, r := state(); return w == 0 && r == 0 })
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 10s")
}
