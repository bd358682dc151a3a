// Package poll is how every test tier waits: check again and again until
// the check passes or its deadline passes, never sleep-and-hope.
package poll

import (
	"testing"
	"time"
)

// Interval is how often a check runs.
const Interval = 50 * time.Millisecond

// Until runs check until it returns nil, failing the test with the last
// error once timeout has passed.
func Until(tb testing.TB, timeout time.Duration, check func() error) {
	tb.Helper()
	UntilEvery(tb, timeout, Interval, check)
}

// UntilEvery is Until looking every interval: a test that measures how
// soon something happened looks often, so that the bound is measured to
// the moment, not to Interval.
func UntilEvery(tb testing.TB, timeout, every time.Duration, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("not within %s: %v", timeout, err)
		}
		time.Sleep(every)
	}
}

// Holds runs check for the whole of d, failing the test the first time it
// returns an error: a negative assertion ("nothing happens") holds over a
// window, not at one instant.
func Holds(tb testing.TB, d time.Duration, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		if err := check(); err != nil {
			tb.Fatalf("did not hold for %s: %v", d, err)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(Interval)
	}
}
