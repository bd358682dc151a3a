package jetstreamcontroller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/pause"
)

// finalize removes the server object of a deleted resource, unless asked
// not to, then lets the resource go. It never deletes what kubenats did not
// create, and it does not block forever on a target that is gone (a
// NatsCluster deleted, a namespace no longer allowed, a Secret no longer
// usable) or in a namespace being deleted: then it leaves the server object
// in place, with a Warning event. A paused resource lets go at once and
// leaves its server object in place (releasePaused).
func (r *Reconciler[T, C]) finalize(ctx context.Context, req ctrl.Request, obj T, paused pause.State) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, v1alpha1.JetStreamFinalizer) {
		return ctrl.Result{}, nil
	}
	if paused.Paused {
		r.releasePaused(obj, paused)
	} else if !obj.GetLifecycle().PreventDelete {
		blocked, err := r.deleteOnServer(ctx, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if blocked != "" {
			terminating, err := r.namespaceTerminating(ctx, obj.GetNamespace())
			if err != nil {
				return ctrl.Result{}, err
			}
			if !terminating {
				return ctrl.Result{RequeueAfter: r.Backoff.When(req)}, r.reportBlockedDeletion(ctx, obj, blocked)
			}
			r.releaseInTerminatingNamespace(ctx, obj, blocked)
		}
	}
	r.Backoff.Forget(req)
	r.Pool.Release(r.user(obj.GetNamespace(), obj.GetName()))
	patch := client.MergeFrom(obj.DeepCopyObject().(T))
	controllerutil.RemoveFinalizer(obj, v1alpha1.JetStreamFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, obj, patch))
}

// reportBlockedDeletion says in the Ready condition why a deleted resource
// is still there, so that a Terminating resource does not look Synced.
func (r *Reconciler[T, C]) reportBlockedDeletion(ctx context.Context, obj T, why string) error {
	prev := obj.GetJetStreamStatus().DeepCopy()
	// retry: the finalizer tries again with backoff; it is the server
	// that must come back, not the user who must act.
	next := jetStreamStatus(obj, prev, outcome{reason: reasonDeletionBlocked, message: why, retry: true}, pause.State{}, metav1.Now())
	if equality.Semantic.DeepEqual(*prev, next) {
		return nil
	}
	*obj.GetJetStreamStatus() = next
	err := r.Status().Update(ctx, obj)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // the next pass reports it
	}
	return err
}

// deleteOnServer deletes the server object if it is kubenats'. blocked says
// why it cannot now, while the server cannot be reached but may come back.
func (r *Reconciler[T, C]) deleteOnServer(ctx context.Context, obj T) (blocked string, _ error) {
	spec, problem, err := r.resolveTarget(ctx, obj)
	if err != nil {
		return "", err
	}
	if problem != nil {
		if problem.gone {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "FinalizerReleased", "Delete",
				"%s; the server object, if any, was left in place", problem.message)
			return "", nil
		}
		return "waiting to delete the server object: " + problem.message, nil
	}
	conn, err := r.Pool.Acquire(ctx, r.user(obj.GetNamespace(), obj.GetName()), r.Kind.Address(obj), spec)
	if err != nil {
		return "waiting to delete the server object: " + acquireFailed(ctx, spec, err).message, nil
	}
	ctx, done, err := serverCalls(ctx)
	if err != nil {
		return "waiting to delete the server object: " + err.Error(), nil
	}
	defer done()
	observed, err := r.Kind.Observe(ctx, conn.JS, obj)
	countCall(r.Kind.Name(), "observe", err)
	switch {
	case errors.Is(err, jetstream.ErrNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return "", nil
	case err != nil:
		return "cannot delete the server object: " + err.Error(), nil
	}
	if c, _ := claimOf(observed.Owner, r.owner(obj)); c != claimMine {
		return "", nil // someone else's: never deleted
	}
	err = r.Kind.Delete(ctx, conn.JS, obj)
	countCall(r.Kind.Name(), "delete", err)
	if err != nil {
		return "cannot delete the server object: " + err.Error(), nil
	}
	return "", nil
}

// namespaceTerminating reports whether ns is being deleted. Read past the
// cache, and only when a deletion is blocked: the operator watches no
// namespaces. A namespace it may not read counts as not terminating.
func (r *Reconciler[T, C]) namespaceTerminating(ctx context.Context, ns string) (bool, error) {
	var n corev1.Namespace
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: ns}, &n)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsForbidden(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return !n.DeletionTimestamp.IsZero() || n.Status.Phase == corev1.NamespaceTerminating, nil
}

// releaseInTerminatingNamespace tells why a resource whose server object
// could not be deleted lets go: its namespace is going, and waiting would
// hold the namespace in Terminating for as long as the server is away. The
// API server takes no new events in a terminating namespace, so the
// operator's log says it too.
func (r *Reconciler[T, C]) releaseInTerminatingNamespace(ctx context.Context, obj T, blocked string) {
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "FinalizerReleased", "Delete",
		"the namespace is being deleted and the server object could not be deleted (%s); it was left in place", blocked)
	log.FromContext(ctx).Info("finalizer released in a terminating namespace; the server object, if any, was left in place",
		"kind", r.Kind.Name(), "reason", blocked)
}
