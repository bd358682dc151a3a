package poll

import (
	"errors"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheCheckPasses(t *testing.T) {
	calls := 0
	Until(t, time.Second, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if calls != 3 {
		t.Fatalf("check ran %d times, want 3", calls)
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r)
}

func TestUntilFailsAfterTheDeadline(t *testing.T) {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != r {
				t.Fatalf("Until did not fail the test: %v", p)
			}
		}()
		Until(r, 120*time.Millisecond, func() error { return errors.New("never") })
	}()
	if r.failed != "not within %s: %v" {
		t.Fatalf("failure message %q", r.failed)
	}
}

func TestHoldsChecksForTheWholeWindow(t *testing.T) {
	start, calls := time.Now(), 0
	Holds(t, 200*time.Millisecond, func() error { calls++; return nil })
	if time.Since(start) < 200*time.Millisecond || calls < 3 {
		t.Fatalf("Holds returned after %s and %d checks", time.Since(start), calls)
	}
}

func TestHoldsFailsOnTheFirstBreak(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	func() {
		defer func() {
			if p := recover(); p != r {
				t.Fatalf("Holds did not fail the test: %v", p)
			}
		}()
		Holds(r, time.Minute, func() error {
			calls++
			if calls == 3 {
				return errors.New("broken")
			}
			return nil
		})
	}()
	if r.failed != "did not hold for %s: %v" || calls != 3 {
		t.Fatalf("failure %q after %d checks", r.failed, calls)
	}
}
