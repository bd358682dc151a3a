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
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("not within %s: %v", timeout, err)
		}
		time.Sleep(Interval)
	}
}
