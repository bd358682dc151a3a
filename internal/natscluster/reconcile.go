package natscluster

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/status"
)

// Reconcile brings one NatsCluster's children to what its spec says, then
// writes its status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var live v1alpha1.NatsCluster
	if err := r.Get(ctx, req.NamespacedName, &live); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !live.DeletionTimestamp.IsZero() {
		forgetMetrics(req.Namespace, req.Name)
		r.leaders.forget(live.UID)
		// Once the guard lets it go, garbage collection removes the
		// children.
		return r.guardDeletion(ctx, &live)
	}
	if paused := pause.Of(&live, r.OperatorPaused); paused.Paused {
		return r.reconcilePaused(ctx, &live, paused)
	}
	if err := r.holdDeletion(ctx, &live); err != nil {
		return ctrl.Result{}, err
	}
	c := live.WithDefaults()
	if err := r.settleClientPlaintext(ctx, c); err != nil {
		return ctrl.Result{}, err
	}

	mesh, err := r.planMesh(ctx, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs := status.ClusterObservation{Cluster: c, Now: metav1.Now()}
	result, blocker, want, applyErr := r.reconcileChildren(ctx, c, &obs, mesh.stage())
	if blocker == nil && applyErr == nil {
		if applyErr = r.finishMesh(ctx, c, mesh); applyErr != nil {
			blocker = &status.Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: applyErr.Error()}
		}
	}
	pods, hung, err := r.observe(ctx, c, &obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	observeZones(&obs, pods)
	if blocker == nil && applyErr == nil {
		var wait time.Duration
		blocker, wait, err = r.rollout(ctx, c, obs.StatefulSet, pods, hung)
		if err != nil {
			return ctrl.Result{}, err
		}
		result.RequeueAfter = wait
	}
	if obs.Takeover = takeoverProgress(c, obs.StatefulSet, pods, blocker); obs.Takeover != nil && (c.Status.Takeover == nil || *obs.Takeover != *c.Status.Takeover) {
		// The next phase renders other routes: the status write that
		// records it wakes no pass.
		result.RequeueAfter = soonest(result.RequeueAfter, settleRetry)
	}
	obs.ConfigLoaded = configNotLoaded(v1alpha1.ReasonReloadNotChecked, "not checked: the pass stopped short")
	// want is nil when the children were not applied; a rollout under way
	// is no reason not to look (plan.Reload leaves outdated servers to it).
	if applyErr == nil && want != nil {
		var retry time.Duration
		obs.ConfigLoaded, retry = r.reloadConfig(ctx, c, &obs, pods, hung, want)
		result.RequeueAfter = soonest(result.RequeueAfter, retry)
	}
	// A settled cluster: nothing to roll, no server hung. Its leaders are
	// spread once for each new set of servers or request.
	// The occasion counts as done once the status holding its count is
	// written: a pass whose status write lost a race balances again.
	balancedFor := ""
	// Not while a chart release is taken over: its phases replace every
	// server, and a leader moved between them is one more stall.
	takingOver := obs.Takeover != nil && obs.Takeover.Phase != v1alpha1.TakeoverComplete
	if blocker == nil && applyErr == nil && len(hung) == 0 && result.RequeueAfter == 0 && !takingOver {
		var retry bool
		switch obs.Carried, retry = r.carryOutRequests(ctx, c, pods); {
		case retry:
			result.RequeueAfter = soonest(result.RequeueAfter, leaderNotNowRecheck)
		case obs.Carried != c.Status.Carried:
			// A request was carried out: its outcome (a new meta leader)
			// raises no Kubernetes event; look again soon.
			result.RequeueAfter = soonest(result.RequeueAfter, leaderRecheck)
		}
		if occasion := leaderOccasion(c, pods); r.leaders.due(c, occasion) {
			var state leaderBalance
			switch obs.Leaders, state = r.balanceLeaders(ctx, c, pods); state {
			case leadersBalanced:
				balancedFor = occasion
			case leadersMoved:
				result.RequeueAfter = soonest(result.RequeueAfter, leaderRecheck)
			case leadersNotNow:
				// Nothing raises an event when the groups catch up.
				result.RequeueAfter = soonest(result.RequeueAfter, leaderNotNowRecheck)
			}
		}
	}
	if c.HasTrust() {
		var retry time.Duration
		if obs.OperatorKeys, retry, err = r.rotateOperatorKeys(ctx, c, blocker == nil && applyErr == nil && want != nil); err != nil {
			return ctrl.Result{}, err
		}
		result.RequeueAfter = soonest(result.RequeueAfter, retry)
	}
	// What the servers report (a hang, a store filling up or emptied by a
	// purge) raises no Kubernetes event: an idle cluster is looked at
	// again now and then, a hung server soon, until it answers.
	switch {
	case len(hung) > 0:
		result.RequeueAfter = soonest(result.RequeueAfter, settleRetry)
	case len(pods) > 0:
		result.RequeueAfter = soonest(result.RequeueAfter, idleRecheck)
	}
	obs.Blocker, obs.Mesh = blocker, mesh.verdict()
	if c.Spec.MonitoringEnabled() {
		obs.Monitoring = monitoringVerdict(c, r.prometheusOperator())
	}
	result.RequeueAfter = soonest(result.RequeueAfter, mesh.retry())
	next := status.NatsCluster(obs)
	recordMetrics(c, &obs, next)
	r.announce(c, live.Status, next)
	r.announceStorage(c, live.Status, next)
	if err := r.writeStatus(ctx, &live, next); apierrors.IsConflict(err) {
		// The cache has not seen our previous write yet; its own event is
		// filtered out (status only), so look again shortly.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	} else if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // deleted meanwhile
	}
	if balancedFor != "" {
		r.leaders.finished(c, balancedFor)
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return result, nil
}

// leaderRecheck is how soon a pass that moved leaders looks at them
// again: an election takes a moment.
const leaderRecheck = 2 * time.Second

// leaderNotNowRecheck is how soon a balance that found the cluster not
// settled looks again.
const leaderNotNowRecheck = 5 * time.Second

// conflictRetry is how soon a pass whose status write lost a race runs again.
const conflictRetry = 100 * time.Millisecond

// writeStatus writes next unless it equals what is there: an idle pass makes
// no request at all.
func (r *Reconciler) writeStatus(ctx context.Context, live *v1alpha1.NatsCluster, next v1alpha1.NatsClusterStatus) error {
	if equality.Semantic.DeepEqual(live.Status, next) {
		return nil
	}
	live.Status = next
	return r.Status().Update(ctx, live)
}
