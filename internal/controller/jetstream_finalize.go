package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
)

// finalize removes the server object of a deleted resource, unless asked
// not to, then lets the resource go. It never deletes what kubenats did not
// create, and it does not block forever on a target that is gone.
func (r *JetStreamReconciler[T, C]) finalize(ctx context.Context, req ctrl.Request, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, v1alpha1.JetStreamFinalizer) {
		return ctrl.Result{}, nil
	}
	if !obj.GetLifecycle().PreventDelete {
		blocked, err := r.deleteOnServer(ctx, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if blocked != "" {
			return ctrl.Result{RequeueAfter: r.Backoff.When(req)}, r.reportBlockedDeletion(ctx, obj, blocked)
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
func (r *JetStreamReconciler[T, C]) reportBlockedDeletion(ctx context.Context, obj T, why string) error {
	prev := obj.GetJetStreamStatus().DeepCopy()
	next := jetStreamStatus(obj, prev, outcome{reason: reasonDeletionBlocked, message: why})
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
func (r *JetStreamReconciler[T, C]) deleteOnServer(ctx context.Context, obj T) (blocked string, _ error) {
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
		logf.FromContext(ctx).Info("cannot reach the NATS system", "system", spec.System, "error", err.Error())
		return "waiting to delete the server object: " + connectionFailedMessage, nil
	}
	ctx, cancel := context.WithTimeout(ctx, serverCallsTimeout)
	defer cancel()
	observed, err := r.Kind.Observe(ctx, conn.JS, obj)
	switch {
	case errors.Is(err, jetstream.ErrNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return "", nil
	case err != nil:
		return "cannot delete the server object: " + err.Error(), nil
	case observed.Owner != r.owner(obj):
		return "", nil // someone else's: never deleted
	}
	if err := r.Kind.Delete(ctx, conn.JS, obj); err != nil {
		return "cannot delete the server object: " + err.Error(), nil
	}
	return "", nil
}
