package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubenats/kubenats/internal/jetstream"
)

// finalize removes the server object of a deleted resource, unless asked
// not to, then lets the resource go. It never deletes what kubenats did not
// create, and it does not block forever on a target that is gone.
func (r *JetStreamReconciler[T, C]) finalize(ctx context.Context, req ctrl.Request, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, jetStreamFinalizer) {
		return ctrl.Result{}, nil
	}
	if !obj.GetLifecycle().PreventDelete {
		retry, err := r.deleteOnServer(ctx, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if retry {
			return ctrl.Result{RequeueAfter: r.Backoff.When(req)}, nil
		}
	}
	r.Backoff.Forget(req)
	r.Pool.Release(r.user(obj.GetNamespace(), obj.GetName()))
	patch := client.MergeFrom(obj.DeepCopyObject().(T))
	controllerutil.RemoveFinalizer(obj, jetStreamFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, obj, patch))
}

// deleteOnServer deletes the server object if it is kubenats'. retry is true
// while the server cannot be reached but may come back.
func (r *JetStreamReconciler[T, C]) deleteOnServer(ctx context.Context, obj T) (retry bool, _ error) {
	spec, problem, err := r.resolveTarget(ctx, obj)
	if err != nil {
		return false, err
	}
	if problem != nil {
		if problem.gone {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "FinalizerReleased", "Delete",
				"%s; the server object, if any, was left in place", problem.message)
			return false, nil
		}
		return true, nil
	}
	conn, err := r.Pool.Acquire(ctx, r.user(obj.GetNamespace(), obj.GetName()), r.Kind.Stream(obj), spec)
	if err != nil {
		return true, nil
	}
	observed, err := r.Kind.Observe(ctx, conn.JS, obj)
	switch {
	case errors.Is(err, jetstream.ErrNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return false, nil
	case err != nil:
		return true, nil
	case observed.Owner != r.owner(obj):
		return false, nil // someone else's: never deleted
	}
	if err := r.Kind.Delete(ctx, conn.JS, obj); err != nil {
		return true, nil
	}
	return false, nil
}
