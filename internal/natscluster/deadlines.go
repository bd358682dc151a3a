package natscluster

import (
	"time"
)

// Every reconcile runs under a deadline, so that no server, however slow
// or silent, holds a worker for good: a pass that runs out returns, and the
// resource is retried with backoff while the other workers go on. Each
// dial has its own, shorter deadline (the NATS guard's 5s), and the
// NatsCluster pass's monitor requests theirs (2s).
const (
	// DefaultNatsClusterWorkers is how many NatsClusters are reconciled at
	// once (one cluster never twice at once), unless
	// Reconciler.Workers says otherwise: a pass that waits on servers that
	// do not answer (a tenant's hung or cut-off cluster, each request
	// bounded by the answer bound) holds no other tenant's cluster back, unless
	// that many are hung at once. A pass mostly waits; the API server's
	// client-side rate limit is shared whatever the count. The passes share
	// only memories kept under their own locks.
	DefaultNatsClusterWorkers = 16
	// natsClusterReconcileTimeout leaves room for a pass that reads every
	// server's /jsz and steps a rollout.
	natsClusterReconcileTimeout = 2 * time.Minute
)
