package jetstream

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrReconnecting: the connection was lost and is not back yet.
var ErrReconnecting = errors.New("the connection to the NATS system is lost and not back yet")

// AwaitConnected waits at most within for c to be connected. nats.go keeps
// a request made while it reconnects and sends it once back: a pass that
// called a system that went away would hold its worker, and its room for
// replies (ReserveCalls) that the passes of every other system wait for,
// until its calls' deadline. A connection not back within that is reported
// at once; its users are woken when it is (the reconnect handler).
func (c *Conn) AwaitConnected(ctx context.Context, within time.Duration) error {
	if c.NC.IsConnected() {
		return nil
	}
	changed := c.NC.StatusChanged(nats.CONNECTED, nats.CLOSED)
	defer c.NC.RemoveStatusListener(changed)
	switch { // what came before the listener was in place
	case c.NC.IsConnected():
		return nil
	case c.NC.IsClosed():
		return nats.ErrConnectionClosed
	}
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case status := <-changed:
		if status == nats.CONNECTED {
			return nil
		}
		return nats.ErrConnectionClosed
	case <-timer.C:
		return ErrReconnecting
	case <-ctx.Done():
		return ctx.Err()
	}
}
