package natsmon

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
)

// maxMonitorInFlight bounds, over the whole process, the bytes of answers
// from servers being read at once: monitor bodies, system account pings,
// the account controller's pushes and reads. Each read reserves its cap
// before it starts (a ping reserves what its answers may hold pending), so
// the cap's worth of names and elements it may keep is paid for whatever
// the server sends: 16 reconcile workers reading 16 MiB /jsz bodies would
// otherwise hold 16 of them at once against the operator's 128 MiB. 64
// MiB lets a system account ping (maxPingPending), a /jsz read and sixteen
// /varz reads run together, and keeps the rest of the heap (caches,
// watches) its room; a read past the budget waits for one to finish (each
// is bounded by its client's timeout or its ping's wait).
const maxMonitorInFlight = 64 << 20

var monitorInFlight = semaphore.NewWeighted(maxMonitorInFlight)

// Reserve takes n bytes of the in-flight budget, waiting while it is
// spent; release gives them back.
func Reserve(ctx context.Context, n int64) (release func(), err error) {
	if n > maxMonitorInFlight {
		return nil, fmt.Errorf("an answer of up to %d bytes exceeds the operator's in-flight budget of %d", n, maxMonitorInFlight)
	}
	if err := monitorInFlight.Acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("waiting for room to read a server's answer: %w", err)
	}
	return func() { monitorInFlight.Release(n) }, nil
}
