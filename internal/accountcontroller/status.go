package accountcontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/status"
)

// refuse reports what stops an account's pass on the account and on its
// users. Deleted users go: with the cluster refusing the account, or its
// keys gone, no revocation can reach the servers through this account.
func (r *Reconciler) refuse(ctx context.Context, a *v1alpha1.NatsAccount, users []*v1alpha1.NatsUser, reason, message string) error {
	if reason == v1alpha1.ReasonClusterNotAdmitted || reason == v1alpha1.ReasonAccountKeysMissing {
		if err := r.releaseAll(ctx, users); err != nil {
			return err
		}
	}
	return r.report(ctx, a, users, reason, message)
}

// report writes what stops an account's pass on the account and its live
// users, and lets no user go.
func (r *Reconciler) report(ctx context.Context, a *v1alpha1.NatsAccount, users []*v1alpha1.NatsUser, reason, message string) error {
	if err := r.setAccountReady(ctx, a, status.AccountPass(false, reason, message)); err != nil {
		return err
	}
	for _, u := range users {
		if u.DeletionTimestamp.IsZero() {
			if err := r.setUserReady(ctx, u, status.UserOfUnreadyAccount(reason, message), ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// setAccountReady writes a's Ready condition alone (and what GitOps
// tools read beside it).
func (r *Reconciler) setAccountReady(ctx context.Context, a *v1alpha1.NatsAccount, p status.Pass) error {
	next := a.Status.DeepCopy()
	next.ObservedGeneration = a.Generation
	next.Conditions = status.ReadyConditions(a.Status.Conditions, a.Generation, metav1.Now(), p)
	return r.writeAccountStatus(ctx, a, next)
}

func (r *Reconciler) writeAccountStatus(ctx context.Context, a *v1alpha1.NatsAccount, next *v1alpha1.NatsAccountStatus) error {
	if equality.Semantic.DeepEqual(&a.Status, next) {
		return nil
	}
	a.Status = *next
	return client.IgnoreNotFound(r.Status().Update(ctx, a))
}

// setUserReady writes u's Ready condition, and its key when one is given.
func (r *Reconciler) setUserReady(ctx context.Context, u *v1alpha1.NatsUser, p status.Pass, publicKey string) error {
	next := u.Status.DeepCopy()
	next.ObservedGeneration = u.Generation
	next.Conditions = status.ReadyConditions(u.Status.Conditions, u.Generation, metav1.Now(), p)
	if publicKey != "" {
		next.PublicKey = publicKey
		next.ExpiresAt = u.Spec.ExpiresAt
		next.CredentialsSecretRef = &v1alpha1.LocalRef{Name: u.CredentialsSecretName()}
	}
	if equality.Semantic.DeepEqual(&u.Status, next) {
		return nil
	}
	u.Status = *next
	return client.IgnoreNotFound(r.Status().Update(ctx, u))
}

// writeStatuses reports a pass that got as far as the push: the account's
// key, users and usage, the operator key that signed the JWT the servers
// took, and each user's credentials.
func (r *Reconciler) writeStatuses(ctx context.Context, a *v1alpha1.NatsAccount, keys accounts.AccountKeys, p userPlan,
	done map[types.UID]issued, refused []accounts.RefusedImport, signedBy string, usage natsmon.AccountUsage, pushErr error,
	limits *status.Verdict) error {
	next := a.Status.DeepCopy()
	next.ObservedGeneration = a.Generation
	next.PublicKey = keys.PublicKey
	next.Users = int64(len(p.Issue) + len(p.Current) + len(p.Conflict))
	ready, reason, message := true, v1alpha1.ReasonReady, "the account is on every ready server"
	switch {
	case errors.Is(pushErr, errNoServers):
		ready, reason, message = false, v1alpha1.ReasonPushFailed, "no server of the cluster is ready yet"
	case pushErr != nil:
		ready, reason, message = false, v1alpha1.ReasonPushFailed, "the servers did not take the account: "+pushErr.Error()
	case len(refused) > 0:
		reasons := make([]string, 0, len(refused))
		for _, im := range refused {
			reasons = append(reasons, im.Reason)
		}
		ready, reason, message = false, v1alpha1.ReasonImportNotExported, "left out: "+strings.Join(reasons, "; ")
	}
	if pushErr == nil {
		next.SignedBy = signedBy
		next.Connections = usage.Connections
		switch js := usage.JetStream; {
		case !accountHasJetStream(a):
			next.JetStream = nil
		case js != nil:
			next.JetStream = &v1alpha1.AccountJetStreamUsage{Memory: js.Memory, Storage: js.Storage, Streams: js.Streams, Consumers: js.Consumers}
		}
	}
	pass := status.AccountPass(ready, reason, message)
	verdicts := status.WithProgress(pass.Verdict(), pass.Stalled)
	if v := rotationVerdict(keys, p, done); v != nil {
		verdicts = append(verdicts, *v)
	}
	if limits != nil {
		verdicts = append(verdicts, *limits)
	}
	next.Conditions = status.Conditions(a.Status.Conditions, a.Generation, metav1.Now(), verdicts...)
	if err := r.writeAccountStatus(ctx, a, next); err != nil {
		return err
	}
	for _, u := range p.Conflict {
		if err := r.setUserReady(ctx, u, status.AccountPass(false, v1alpha1.ReasonNameConflict,
			fmt.Sprintf("the Secret %s exists and is not this user's: rename it or set spec.secretName", u.CredentialsSecretName())), ""); err != nil {
			return err
		}
	}
	for _, is := range p.Issue {
		res := done[is.User.UID]
		if res.Err != nil {
			if err := r.setUserReady(ctx, is.User, status.AccountPass(false, v1alpha1.ReasonApplyFailed, "issuing the credentials: "+res.Err.Error()), ""); err != nil {
				return err
			}
			continue
		}
		if err := r.setUserReady(ctx, is.User, status.AccountPass(true, v1alpha1.ReasonReady, userReadyMessage(is.User)), res.PublicKey); err != nil {
			return err
		}
	}
	for _, c := range p.Current {
		if err := r.setUserReady(ctx, c.User, status.AccountPass(true, v1alpha1.ReasonReady, userReadyMessage(c.User)), c.Key); err != nil {
			return err
		}
	}
	return nil
}

func userReadyMessage(u *v1alpha1.NatsUser) string {
	return "credentials in Secret " + u.CredentialsSecretName()
}
