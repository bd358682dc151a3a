package natsmon

import (
	"context"
	"fmt"

	"github.com/kubenats/kubenats/internal/serverbudget"
)

// The bytes of servers' answers being read at once (monitor bodies, system
// account pings, the account controller's pushes and reads) come out of
// the operator's one memory budget for what servers send
// (serverbudget.Memory, 64 MiB by default, shared with the messages its
// NATS connections are receiving). Each read reserves its cap before it
// starts (a ping reserves what its answers may hold pending), so the cap's
// worth of names and elements it may keep is paid for whatever the server
// sends: 16 reconcile workers reading 16 MiB /jsz bodies would otherwise
// hold 16 of them at once against the operator's 128 MiB. A read past the
// budget waits for one to finish (each is bounded by its client's timeout
// or its ping's wait).

// Reserve takes n bytes of the budget, waiting while it is spent; release
// gives them back.
func Reserve(ctx context.Context, n int64) (release func(), err error) {
	if err := serverbudget.Memory.Take(ctx, "", n); err != nil {
		return nil, fmt.Errorf("waiting for room to read a server's answer of up to %d bytes: %w", n, err)
	}
	return func() { serverbudget.Memory.Give("", n) }, nil
}
