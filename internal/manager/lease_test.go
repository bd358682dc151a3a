package manager

import (
	"testing"
	"time"
)

// A shorter lease keeps controller-runtime's proportions, which its
// leader election requires (renew deadline above the retry period with
// jitter, below the lease): a careless share (renew = lease, or retry =
// renew) makes the manager refuse to start.
func TestLeaseShares(t *testing.T) {
	if leaseShare(0, 10) != nil {
		t.Fatal("no lease duration must keep controller-runtime's defaults")
	}
	for _, d := range []time.Duration{4 * time.Second, 15 * time.Second, time.Minute} {
		lease, renew, retry := d, *leaseShare(d, 10), *leaseShare(d, 2)
		if !(renew < lease && float64(renew) > 1.2*float64(retry)) {
			t.Errorf("lease %s: renew %s, retry %s break leader election's rules", lease, renew, retry)
		}
	}
	if got := *leaseShare(15*time.Second, 10); got != 10*time.Second {
		t.Errorf("a 15 s lease renews within %s, want controller-runtime's 10 s", got)
	}
}
