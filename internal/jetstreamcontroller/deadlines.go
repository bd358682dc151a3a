package jetstreamcontroller

import (
	"time"

	"github.com/kubenats/kubenats/internal/jetstream"
)

// Every JetStream pass runs under a deadline, so that no server, however
// slow or silent, holds a worker for good: a pass that runs out returns,
// and the resource is retried with backoff while the other workers go on.
// Each dial has its own, shorter deadline (the NATS guard's 5s).
const (
	// jetStreamReconcileTimeout bounds a JetStream pass. A dial that takes
	// longer (16 servers that do not answer take up to 16 guard deadlines)
	// goes on in the pool, and the next pass waits for it again.
	jetStreamReconcileTimeout = 30 * time.Second
	// serverCallsTimeout bounds the JetStream API calls of one pass once
	// connected. Without a deadline of its own, nats.go's jetstream package
	// gives each call 5s; under the pass's deadline it would wait for all
	// that is left of it on a server that went away.
	// The guard admits a call's reply for as long (jetstream.MaxCallWait).
	serverCallsTimeout = jetstream.MaxCallWait
	// reconnectGrace is how long a pass waits for a lost connection to be
	// back before it reports the system unreachable: longer than nats.go
	// takes to reconnect to a system that is there (attempts 2 s apart,
	// plus up to 1 s of jitter), so that a server restarting behind a
	// Service does not turn its resources' Ready false.
	reconnectGrace = 5 * time.Second
)
