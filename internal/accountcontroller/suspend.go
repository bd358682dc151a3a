package accountcontroller

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// A namespace taken off a cluster's spec.auth.accounts (or no longer
// matched by its selector) loses its accounts on the servers, not only
// in status: each account admitted before (it has keys) gets its disabled
// JWT pushed, so that no server takes its users and the connected ones
// are closed. The keys stay as they were, without "every user" revoked:
// a namespace admitted again gets its accounts back, and their users'
// creds work again. Users deleted meanwhile are recorded as revoked in the
// keys first, so that they do not come back with it.

// suspendedResync is how often a suspended account's disabled JWT is
// pushed again with nothing changed (a change of the cluster, such as
// a step of its operator key rotation, pushes it at once): the full
// resolver brings a server that missed it up to date within two
// minutes, and a namespace admitted again by its labels is noticed
// within this time.
const suspendedResync = 5 * time.Minute

// suspend disables account a on cluster c, which no longer admits a's
// namespace. The tenant is told what an account of a namespace that was
// never admitted is told, whatever happens on the servers.
func (r *Reconciler) suspend(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount, users []*v1alpha1.NatsUser) (ctrl.Result, error) {
	keys, found, refusal, err := r.findKeys(ctx, c, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !found || refusal != nil {
		// Never admitted (no keys), or keys that are not its own: nothing
		// to disable with them.
		return ctrl.Result{}, r.refuse(ctx, a, users, v1alpha1.ReasonClusterNotAdmitted, clusterNotAdmitted)
	}
	views, err := r.userViews(ctx, deletedUsers(users))
	if err != nil {
		return ctrl.Result{}, err
	}
	// Only deleted users are in views: the plan revokes their keys and
	// releases them, and decides nothing for anyone else.
	p := planUsers(views, func(*v1alpha1.NatsUser) string { return "" })
	if keys, err = r.revoke(ctx, c, keys, p.Revoke); err == nil {
		err = r.pushDisabled(ctx, c, keys)
	}
	if err != nil {
		log.FromContext(ctx).Info("disabling the account of a namespace no longer admitted failed", "error", err.Error())
		return retrySoon, r.report(ctx, a, users, v1alpha1.ReasonClusterNotAdmitted, clusterNotAdmitted)
	}
	log.FromContext(ctx).V(1).Info("account of a namespace no longer admitted disabled on the servers")
	if err := r.release(ctx, p.Release); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: suspendedResync}, r.report(ctx, a, users, v1alpha1.ReasonClusterNotAdmitted, clusterNotAdmitted)
}

// deletedUsers are the users among users being deleted.
func deletedUsers(users []*v1alpha1.NatsUser) []*v1alpha1.NatsUser {
	var out []*v1alpha1.NatsUser
	for _, u := range users {
		if !u.DeletionTimestamp.IsZero() {
			out = append(out, u)
		}
	}
	return out
}
