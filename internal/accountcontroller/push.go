package accountcontroller

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/servers"
)

// errNoServers: nothing to push to yet; the pass runs again shortly.
var errNoServers = servers.ErrNoServers

// push sends the account's JWT to every ready server of c and reads back
// the account's usage. Each ready server must take it: the full resolver
// would bring a server that missed it up to date within two minutes, but
// a limit raised or a user revoked is to hold within seconds.
func (r *Reconciler) push(ctx context.Context, c *v1alpha1.NatsCluster, keys accounts.AccountKeys, accountJWT string, jetStream bool) (natsmon.AccountUsage, error) {
	nc, ready, err := r.Servers.SystemConn(ctx, c)
	if err != nil {
		if errors.Is(err, servers.ErrNoServers) {
			return natsmon.AccountUsage{}, err
		}
		return natsmon.AccountUsage{}, fmt.Errorf("reaching the servers: %w", err)
	}
	defer nc.Close()
	pushCtx, cancel := context.WithTimeout(ctx, pushWait)
	defer cancel()
	if _, err := accounts.Push(pushCtx, nc, accountJWT, ready); err != nil {
		return natsmon.AccountUsage{}, err
	}
	// The push went through: a usage read that fails leaves the usage at
	// what answered, and the next pass reads it again.
	usage, _ := natsmon.FetchAccountConnections(ctx, nc, keys.PublicKey, len(ready), usageWait)
	if jetStream && len(keys.OperatorCreds) > 0 {
		if own, err := r.Servers.AccountConn(ctx, c, keys.OperatorCreds); err == nil {
			usage.JetStream, _ = natsmon.FetchAccountJetStream(ctx, own)
			own.Close()
		}
	}
	return usage, nil
}

// usageWait bounds the wait for the servers' usage answers.
const usageWait = 2 * pushWait / 5
