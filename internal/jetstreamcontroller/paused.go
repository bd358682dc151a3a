package jetstreamcontroller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/pause"
)

// observePaused is the pass of a paused resource: it reads the server
// object and says how it stands against the spec, and writes nothing, to
// the server or to the resource's owner mark.
//
// The outcome never carries what was observed: the status keeps the
// server configuration and generation the operator itself last wrote, so
// that the pass that resumes sees the drift and the spec changed
// meanwhile, and corrects both. The pool's mark of another client's write
// is not taken either, for the same pass.
func (r *Reconciler[T, C]) observePaused(ctx context.Context, obj T, p pause.State) outcome {
	ctx, conn, done, failed := r.reach(ctx, obj)
	if failed != nil {
		return *failed
	}
	defer done()
	if _, err := r.Kind.Desired(obj, r.owner(obj).String()); err != nil {
		return outcome{reason: reasonInvalidSpec, message: err.Error()}
	}
	observed, err := r.Kind.Observe(ctx, conn.JS, obj)
	countCall(r.Kind.Name(), "observe", err)
	// Nothing here waits for anything that comes by itself: the resume
	// wakes the resource, so none of these outcomes retries.
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return outcome{reason: reasonStreamNotFound, message: fmt.Sprintf("stream %q does not exist", r.Kind.Address(obj).Stream)}
	case errors.Is(err, jetstream.ErrNotFound):
		return outcome{reason: reasonNotFound, message: "the object does not exist on the server; paused, it is not created"}
	case err != nil:
		out := serverFailure(err)
		return out
	}
	event, refused := r.adoption(ctx, obj, observed.Owner)
	if refused != nil {
		refused.retry = false
		return *refused
	}
	st := obj.GetJetStreamStatus()
	switch {
	case event == reasonAdopted:
		return outcome{reason: p.Reason, message: "the server object exists and is adopted once resumed"}
	case st.ObservedGeneration != obj.GetGeneration():
		return outcome{reason: p.Reason, message: fmt.Sprintf("the spec of generation %d is not applied while paused", obj.GetGeneration())}
	case st.ServerConfigHash != observed.Hash:
		return outcome{reason: reasonDrifted, message: "the server object changed; paused, it is not restored"}
	}
	return outcome{ready: true, reason: reasonSynced, message: "the server object matches the spec"}
}

// releasePaused lets a deleted paused resource go without deleting its
// server object, as Strimzi's topic operator does with a paused topic:
// pause means the operator changes nothing on the servers, deletion
// included. The event says so, for whoever wonders why the stream is
// still there.
func (r *Reconciler[T, C]) releasePaused(obj T, p pause.State) {
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "FinalizerReleased", "Delete",
		"deleted while paused (%s): the server object was left in place", p.Reason)
}
