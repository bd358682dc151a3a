package jetstreamcontroller

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/metrics"
)

// connectionFailedMessage is the condition message of every failed dial.
const connectionFailedMessage = "cannot connect to the NATS system (the operator's log has the details)"

// Reasons of a JetStream resource's Ready condition and events.
const (
	reasonSynced          = "Synced"
	reasonCreated         = "Created"
	reasonUpdated         = "Updated"
	reasonRecreated       = "Recreated"
	reasonDriftCorrected  = "DriftCorrected"
	reasonAdopted         = "Adopted"
	reasonDrifted         = "Drifted"
	reasonAlreadyExists   = "AlreadyExists"
	reasonStreamNotFound  = "StreamNotFound"
	reasonServerError     = "ServerError"
	reasonInvalidSpec     = "InvalidSpec"
	reasonNotFound        = "NotFound"
	reasonDeletionBlocked = "DeletionBlocked"
)

// outcome is what one pass found and did.
type outcome struct {
	ready           bool
	reason, message string
	// event is an action worth telling (created, drift corrected, ...).
	event string
	// retry: the resource waits for something that comes by itself.
	retry    bool
	observed *jetstream.Observed
	// restore is how far a Stream's restore Job has come, while it runs.
	restore *v1alpha1.TransferProgress
}

// reach connects to the resource's servers for one pass's calls: ctx
// bounds them, done ends them. A pass that cannot have them gets the
// outcome that says why.
func (r *Reconciler[T, C]) reach(ctx context.Context, obj T) (_ context.Context, _ *jetstream.Conn, done func(), failed *outcome) {
	spec, problem, err := r.resolveTarget(ctx, obj)
	if err != nil {
		return nil, nil, nil, &outcome{reason: reasonConnectionFailed, message: err.Error(), retry: true}
	}
	if problem != nil {
		return nil, nil, nil, &outcome{reason: problem.reason, message: problem.message, retry: problem.reason != reasonNotAllowed}
	}
	conn, err := r.Pool.Acquire(ctx, r.user(obj.GetNamespace(), obj.GetName()), r.Kind.Address(obj), spec)
	if err != nil {
		out := acquireFailed(ctx, spec, err)
		return nil, nil, nil, &out
	}
	if err := conn.AwaitConnected(ctx, reconnectGrace); err != nil {
		out := acquireFailed(ctx, spec, err)
		return nil, nil, nil, &out
	}
	ctx, done, err = serverCalls(ctx)
	if err != nil {
		return nil, nil, nil, &outcome{reason: reasonConnectionFailed, message: err.Error(), retry: true}
	}
	return ctx, conn, done, nil
}

// sync brings the server object to the spec, or says why it cannot.
func (r *Reconciler[T, C]) sync(ctx context.Context, obj T) outcome {
	ctx, conn, done, failed := r.reach(ctx, obj)
	if failed != nil {
		return *failed
	}
	defer done()
	user := r.user(obj.GetNamespace(), obj.GetName())
	desired, err := r.Kind.Desired(obj, r.owner(obj).String())
	if err != nil {
		return outcome{reason: reasonInvalidSpec, message: err.Error()}
	}
	lc := obj.GetLifecycle()
	st := obj.GetJetStreamStatus()
	// Taken before the read: a write by someone else after it marks the
	// object again, for the pass it wakes.
	foreign := r.Pool.TakeForeignWrite(user)
	observed, err := r.Kind.Observe(ctx, conn.JS, obj)
	countCall(r.Kind.Name(), "observe", err)
	restored := false
	if err == nil || errors.Is(err, jetstream.ErrNotFound) {
		var stop *outcome
		if restored, stop = r.restoreStep(ctx, obj, err == nil, observed.Owner); stop != nil {
			return *stop
		}
	}
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return outcome{reason: reasonStreamNotFound, message: fmt.Sprintf("stream %q does not exist yet", r.Kind.Address(obj).Stream), retry: true}
	case errors.Is(err, jetstream.ErrNotFound) && lc.PreventUpdate:
		return outcome{reason: reasonNotFound, message: "the object does not exist on the server and preventUpdate forbids creating it"}
	case errors.Is(err, jetstream.ErrNotFound):
		created, err := r.Kind.Create(ctx, conn.JS, obj, desired)
		countCall(r.Kind.Name(), "create", err)
		if err != nil {
			return serverFailure(err)
		}
		event := reasonCreated
		if st.ServerConfigHash != "" {
			event = reasonRecreated // it was there, and someone deleted it
		}
		return synced(created, event)
	case err != nil:
		return serverFailure(err)
	}

	event, refused := r.adoption(ctx, obj, observed.Owner)
	if restored {
		event, refused = reasonRestored, nil // its own restore made it
	}
	if refused != nil {
		return *refused
	}
	unchanged := st.ServerConfigHash == observed.Hash
	// Another client's write is undone even when the server's
	// configuration reads as the operator's last: the server's answer to
	// that write, where the operator took it from, may already have held
	// the other client's (docs/jetstream.md, "Drift").
	inSync := event == "" && unchanged && !foreign && syncedGeneration(st) == obj.GetGeneration()
	if lc.PreventUpdate {
		if st.ServerConfigHash != "" && st.ServerConfigHash != observed.Hash {
			return outcome{reason: reasonDrifted, message: "the server object changed and preventUpdate forbids restoring it", observed: &observed}
		}
		return synced(observed, "")
	}
	if inSync {
		return synced(observed, "")
	}
	updated, err := r.Kind.Update(ctx, conn.JS, obj, desired)
	countCall(r.Kind.Name(), "update", err)
	if err != nil {
		return serverFailure(err)
	}
	if event == "" {
		event = reasonUpdated
		if syncedGeneration(st) == obj.GetGeneration() && st.ServerConfigHash != "" {
			event = reasonDriftCorrected // the spec did not change: the server did
		}
	}
	return synced(updated, event)
}

// countCall counts one server call; an object that is not there is an
// answer, not a failure.
func countCall(kind, call string, err error) {
	failed := err != nil && !errors.Is(err, jetstream.ErrNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound)
	metrics.CountCall(kind, call, failed)
}

// writeActions name each write event in the writes counter.
var writeActions = map[string]string{
	reasonCreated: "created", reasonUpdated: "updated", reasonRecreated: "recreated",
	reasonDriftCorrected: "drift_corrected", reasonAdopted: "adopted", reasonRestored: "restored",
}

func synced(o jetstream.Observed, event string) outcome {
	return outcome{ready: true, reason: reasonSynced, message: "the server object matches the spec", event: event, observed: &o}
}

// serverFailure reports what the server said, with its error code, and
// retries only what may pass by itself.
func serverFailure(err error) outcome {
	var apiErr *js.APIError
	if errors.As(err, &apiErr) {
		return outcome{reason: reasonServerError, message: fmt.Sprintf("the server refused: %s (error code %d)", apiErr.Description, apiErr.ErrorCode)}
	}
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) {
		logf.Log.WithName("jetstream").Info("lost the NATS system during a call", "error", err.Error())
		return outcome{reason: reasonConnectionFailed, message: connectionFailedMessage, retry: true}
	}
	return outcome{reason: reasonServerError, message: err.Error(), retry: true}
}

// announceJetStream records an event for what the pass did out of the
// ordinary: drift corrected, an object recreated or adopted. Creating and
// updating what the spec says is the normal course, told by the Ready
// condition; an event for each would be one more API write per object.
func (r *Reconciler[T, C]) announceJetStream(obj T, out outcome) {
	if action, ok := writeActions[out.event]; ok {
		metrics.Writes.WithLabelValues(r.Kind.Name(), action).Inc()
	}
	if out.event == "" || out.event == reasonCreated || out.event == reasonUpdated {
		return
	}
	kind := corev1.EventTypeNormal
	if out.event == reasonDriftCorrected || out.event == reasonRecreated {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(obj, nil, kind, out.event, "Sync", "%s %s on the server", r.Kind.Name(), lowerEvent(out.event))
}

func lowerEvent(e string) string {
	switch e {
	case reasonCreated:
		return "created"
	case reasonRecreated:
		return "recreated after it was deleted on the server"
	case reasonDriftCorrected:
		return "restored after it was changed on the server"
	case reasonAdopted:
		return "adopted"
	}
	return "updated"
}

// serverCalls bounds one pass's calls to a server: in time
// (serverCallsTimeout) and in the replies they may hold at once
// (jetstream.ReserveCalls: the calls of a pass run one after another).
// done ends both.
func serverCalls(ctx context.Context) (_ context.Context, done func(), _ error) {
	release, err := jetstream.ReserveCalls(ctx)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, serverCallsTimeout)
	return ctx, func() { cancel(); release() }, nil
}
