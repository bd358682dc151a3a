package accountcontroller

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/status"
)

// finalizeBound is how long a deleted account waits for its servers to
// take its disabled JWT before it goes anyway, with a Warning: a cluster
// that never comes back must not hold its tenants' namespaces forever.
const finalizeBound = 5 * time.Minute

// finalize disables a deleted account on the servers (every user
// revoked, no connection admitted), then lets it and its users go. The
// keys Secret stays, with every user revoked as of now recorded in it:
// a NatsAccount made again with this name is the same NATS account, and
// none of the old users' credentials work in it. The Secret goes with
// the cluster. An account whose namespace the cluster no longer admits is
// disabled all the same: its keys must record the revocation, or a
// namespace admitted again would bring the old users back.
func (r *Reconciler) finalize(ctx context.Context, a *v1alpha1.NatsAccount, users []*v1alpha1.NatsUser) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(a, v1alpha1.AccountFinalizer) {
		return ctrl.Result{}, nil
	}
	cluster, _, err := r.accountCluster(ctx, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster != nil {
		switch err := r.disable(ctx, cluster, a); {
		case errors.Is(err, accounts.ErrKeysOfAnotherAccount):
			// Never another account's keys to revoke with: that would
			// lock out the account they were made for.
			r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, v1alpha1.ReasonAccountKeysMismatch, "Delete",
				"the Secret of the account's keys was not made for this account: nothing was revoked with it")
		case err != nil && time.Since(a.DeletionTimestamp.Time) < finalizeBound:
			return ctrl.Result{RequeueAfter: 5 * time.Second}, r.setAccountReady(ctx, a, status.AccountPass(false, v1alpha1.ReasonPushFailed,
				"deleting: the servers have not taken the disabled account yet: "+err.Error()))
		case err != nil:
			r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, "FinalizerReleased", "Delete",
				"the servers did not take the disabled account within %s; its users stay valid on them until they do: %v", finalizeBound, err)
		}
	}
	if err := r.releaseAll(ctx, users); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(a, v1alpha1.AccountFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, a))
}

// disable records every user of a as revoked and pushes the disabled
// JWT. An account whose keys were never made has nothing to disable;
// keys that are not a's are ErrKeysOfAnotherAccount, and nothing is
// recorded or pushed.
func (r *Reconciler) disable(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount) error {
	keys, found, refusal, err := r.findKeys(ctx, c, a)
	switch {
	case err != nil:
		return err
	case refusal != nil && refusal.reason == v1alpha1.ReasonAccountKeysMismatch:
		return accounts.ErrKeysOfAnotherAccount
	case refusal != nil && refusal.reason == v1alpha1.ReasonNameConflict:
		return nil // not the cluster's Secret: never this account's keys
	case refusal != nil:
		return errors.New(refusal.message)
	case !found:
		return nil
	}
	if keys, err = r.revoke(ctx, c, keys, []string{accounts.AllUsers}); err != nil {
		return err
	}
	return r.pushDisabled(ctx, c, keys)
}

// pushDisabled signs the disabled JWT of the account of keys (its
// recorded revocations kept, every user before now revoked, no
// connection admitted) with the cluster's current operator signing key,
// and pushes it to every ready server.
func (r *Reconciler) pushDisabled(ctx context.Context, c *v1alpha1.NatsCluster, keys accounts.AccountKeys) error {
	operator, _, err := r.operatorSigner(ctx, c)
	if err != nil {
		return err
	}
	claims := accounts.DisabledAccountClaims(accounts.Account{Ref: keys.Account, PublicKey: keys.PublicKey, SigningKey: keys.SigningKey,
		Revoked: keys.Revoked}, time.Now().Unix())
	text, err := accounts.Sign(claims, operator)
	if err != nil {
		return err
	}
	_, err = r.push(ctx, c, keys, text, false)
	return err
}

// orphanUsers are the users of an account that is not there: none of
// them holds credentials the servers take (a deleted account revoked
// them all), so a deleted one goes at once.
func (r *Reconciler) orphanUsers(ctx context.Context, users []*v1alpha1.NatsUser) error {
	var live []*v1alpha1.NatsUser
	for _, u := range users {
		if u.DeletionTimestamp.IsZero() {
			live = append(live, u)
		}
	}
	if err := r.releaseAll(ctx, users); err != nil {
		return err
	}
	for _, u := range live {
		if err := r.setUserReady(ctx, u, status.AccountPass(false, v1alpha1.ReasonAccountNotFound, "the NatsAccount "+u.Spec.Account+" is not in this namespace"), ""); err != nil {
			return err
		}
	}
	return nil
}

// releaseAll drops the finalizer of the deleted users among users.
func (r *Reconciler) releaseAll(ctx context.Context, users []*v1alpha1.NatsUser) error {
	for _, u := range users {
		if u.DeletionTimestamp.IsZero() || !controllerutil.RemoveFinalizer(u, v1alpha1.UserFinalizer) {
			continue
		}
		if err := r.Update(ctx, u); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
