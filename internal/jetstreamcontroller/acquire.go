package jetstreamcontroller

import (
	"context"
	"errors"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/serverbudget"
)

// reasonConnectionLimit: the operator holds as many NATS connections as it
// allows, in all or to the servers of the resource's namespace.
const reasonConnectionLimit = "ConnectionLimit"

// acquireFailed is the outcome of a pass whose connection could not be had.
// A connection refused for the operator's allowance says so, with the
// limit and the flag that sets it (nothing a tenant may not know: it is
// its own namespace's count); every way a dial fails reads the same, so
// that a tenant does not learn from it which addresses answer, refuse or
// do not resolve, and the details go to the operator's log.
func acquireFailed(ctx context.Context, spec jetstream.ConnSpec, err error) outcome {
	if errors.Is(err, serverbudget.ErrConnectionLimit) {
		return outcome{reason: reasonConnectionLimit, message: err.Error(), retry: true}
	}
	logf.FromContext(ctx).Info("cannot reach the NATS system", "system", spec.System, "error", err.Error())
	return outcome{reason: reasonConnectionFailed, message: connectionFailedMessage, retry: true}
}
