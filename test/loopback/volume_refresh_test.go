package loopback

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestRefreshDelayIsPerPodAndNeverZero: every pod waits at least the base
// and under twice it, the same pod always as long, and the pods of one
// StatefulSet not all alike.
func TestRefreshDelayIsPerPodAndNeverZero(t *testing.T) {
	base := DefaultConfigRefreshDelay
	seen := map[time.Duration]bool{}
	for _, uid := range []types.UID{"0b6c9f5e-1", "0b6c9f5e-2", "0b6c9f5e-3", "0b6c9f5e-4"} {
		d := refreshDelay(base, uid)
		if d < base || d >= 2*base {
			t.Errorf("delay of %s is %s, want within [%s, %s)", uid, d, base, 2*base)
		}
		if again := refreshDelay(base, uid); again != d {
			t.Errorf("delay of %s is %s, then %s", uid, d, again)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("every pod waits %v: the pods should see a change at different times", seen)
	}
}
