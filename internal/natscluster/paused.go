package natscluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// reconcilePaused is the pass of a paused cluster: it reads what runs
// (the StatefulSet, the pods, the certificates mounted, what the servers
// answer) and writes the status, and nothing else. No child is applied or
// pruned, no Secret made or renewed, no server reloaded, replaced or
// removed, no operator key rotated, and the deletion guard's finalizer is
// not added either (it is a write to the object; a cluster paused from
// its start has nothing of the operator's to guard). A deletion still goes
// through the guard (Reconcile looks at it first): pause holds no deletion.
//
// The resume is the next full pass, woken by the annotation's change (the
// controller passes annotation changes) or by the operator's restart
// without the flag: it renders from the spec as it is then, so every
// change made meanwhile is applied, and whatever drifted is applied over.
func (r *Reconciler) reconcilePaused(ctx context.Context, live *v1alpha1.NatsCluster, p pause.State) (ctrl.Result, error) {
	c := live.WithDefaults()
	verdict := p.Verdict()
	obs := status.ClusterObservation{Cluster: c, Now: metav1.Now(), Paused: &verdict,
		ConfigLoaded: status.Verdict{Type: v1alpha1.ConditionConfigLoaded, Status: metav1.ConditionUnknown,
			Reason: v1alpha1.ReasonReloadNotChecked, Message: "not checked while paused: the operator sends no reload"}}
	var err error
	// Without the credentials the full pass reads (and might make), each
	// certificate is read from its Secret as mounted.
	if obs.Certificates, _, err = r.observeCertificates(ctx, c, render.Credentials{}); err != nil {
		return ctrl.Result{}, err
	}
	pods, hung, err := r.observe(ctx, c, &obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs.NodeZones = r.eligibleNodeZones(ctx, c)
	observeZones(&obs, pods)
	result := ctrl.Result{}
	switch {
	case len(hung) > 0:
		result.RequeueAfter = settleRetry
	case len(pods) > 0:
		result.RequeueAfter = idleRecheck
	}
	next := status.NatsCluster(obs)
	recordMetrics(c, &obs, next)
	r.announce(c, live.Status, next)
	r.announceStorage(c, live.Status, next)
	if err := r.writeStatus(ctx, live, next); apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	} else if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return result, nil
}
