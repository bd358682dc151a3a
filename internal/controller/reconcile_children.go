package controller

import (
	"context"
	"errors"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// Reasons only this controller reports.
const (
	reasonConfigInvalid    = "ConfigInvalid"
	reasonScaleDownRefused = "ScaleDownRefused"
	// reasonScalingDown: servers are being emptied and removed, then their
	// JetStream peers. Ready waits for the last step, and the reason brings
	// the next pass back to it even once the StatefulSet has shrunk.
	reasonScalingDown = "ScalingDown"
	// reasonScalingUp: new servers run but have not all joined the
	// JetStream meta group yet.
	reasonScalingUp = "ScalingUp"
)

// refusedRetry is how often a refused scale-down looks again: the stream
// whose replicas the user has yet to lower raises no Kubernetes event.
const refusedRetry = 30 * time.Second

// reconcileChildren renders c's objects and applies them. A blocker is what
// the user should know; an error is retried with backoff.
func (r *NatsClusterReconciler) reconcileChildren(ctx context.Context, c *v1alpha1.NatsCluster, obs *status.ClusterObservation, mesh *render.MeshStage) (ctrl.Result, *status.Blocker, error) {
	cred, credHash, blocker, err := r.credentials(ctx, c)
	if err != nil || blocker != nil {
		return ctrl.Result{RequeueAfter: retryAfter(blocker)}, blocker, err
	}
	var renewIn time.Duration
	if render.GeneratesRoutePKI(c) && render.HasRoutes(c) {
		if cred.RoutePKI, renewIn, err = r.routePKI(ctx, c); err != nil {
			return ctrl.Result{}, nil, err
		}
	}
	if obs.Certificates, cred.ClientCA, err = r.observeCertificates(ctx, c, cred.RoutePKI); err != nil {
		return ctrl.Result{}, nil, err
	}
	objs, err := render.Objects(c, render.Inputs{CredentialsHash: credHash, ClusterDomain: r.clusterDomain(),
		Mesh: mesh, NativeSidecars: r.NativeSidecars})
	if err != nil {
		return ctrl.Result{}, &status.Blocker{Reason: reasonConfigInvalid, Message: err.Error(), Fatal: true}, nil
	}
	hold, blocker, err := r.guardStatefulSet(ctx, c, findStatefulSet(objs))
	if err != nil {
		return ctrl.Result{}, nil, err
	}
	if hold {
		objs = slices.DeleteFunc(objs, isStatefulSet)
	}
	secrets := render.Secrets(c, cred)
	for _, obj := range append(asObjects(secrets), objs...) {
		if err := r.Applier.Apply(ctx, c, obj); err != nil {
			if b := certManagerMissing(err); b != nil {
				return ctrl.Result{}, b, nil
			}
			if conflict := (*apply.ConflictError)(nil); errors.As(err, &conflict) {
				return ctrl.Result{}, &status.Blocker{Reason: v1alpha1.ReasonNameConflict, Message: err.Error(), Fatal: true}, nil
			}
			return ctrl.Result{}, &status.Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, err
		}
	}
	if err := r.pruneOptional(ctx, c, objs); err != nil {
		return ctrl.Result{}, &status.Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, err
	}
	return ctrl.Result{RequeueAfter: soonest(retryAfter(blocker), renewIn)}, blocker, nil
}

// soonest is the shorter of two requeue delays, zero meaning none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

func asObjects[T client.Object](in []T) []client.Object {
	out := make([]client.Object, len(in))
	for i, o := range in {
		out[i] = o
	}
	return out
}

// retryAfter is when a pass that stopped short looks again, for what raises
// no Kubernetes event: replicas moving inside NATS, a stream the user has
// yet to shrink. A user Secret needs no retry: its changes are watched.
func retryAfter(b *status.Blocker) time.Duration {
	switch {
	case b == nil:
		return 0
	case b.Reason == reasonScaleDownRefused:
		return refusedRetry
	case b.Reason == v1alpha1.ReasonProgressing, b.Reason == reasonScalingDown, b.Reason == reasonScalingUp:
		return settleRetry
	}
	return 0
}
