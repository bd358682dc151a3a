package accountcontroller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/status"
)

// A signing key rotation is asked for with the annotation
// kubenats.io/rotate-signing-key (each new value once). The pass that
// sees a new value makes a new signing key and keeps the previous one in
// the account JWT; every user's digest includes the signing key, so the
// same pass re-issues every user's creds with the new key (their own
// keys unchanged). The previous key goes once every user holds creds of
// the new one and the grace is over: until then a client connected with
// the old creds stays connected, and one that reconnects reads the new
// creds from its mounted Secret.

// rotate answers a new rotation request on a.
func (r *Reconciler) rotate(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount, keys accounts.AccountKeys) (accounts.AccountKeys, error) {
	until := time.Now().Add(r.grace()).Unix()
	next, changed, err := keys.Rotate(a.Annotations[v1alpha1.AnnotationRotateSigningKey], until)
	if err != nil || !changed {
		return keys, err
	}
	if err := r.writeKeys(ctx, c, next); err != nil {
		return keys, fmt.Errorf("recording the new signing key: %w", err)
	}
	r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "SigningKeyRotated", "Rotate",
		"a new signing key; every user is re-issued with it, and the previous one stays until %s and every user holds new creds",
		time.Unix(until, 0).UTC().Format(time.RFC3339))
	return next, nil
}

// dropPrevious removes the rotated-out key once it may go (see
// AccountKeys.DropPrevious): every user is current after this pass's
// issues, and the grace is over.
func (r *Reconciler) dropPrevious(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount, keys accounts.AccountKeys,
	p userPlan, done map[types.UID]issued) (accounts.AccountKeys, error) {
	next, dropped := keys.DropPrevious(time.Now().Unix(), allReissued(p, done))
	if !dropped {
		return keys, nil
	}
	if err := r.writeKeys(ctx, c, next); err != nil {
		return keys, fmt.Errorf("dropping the previous signing key: %w", err)
	}
	r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "PreviousSigningKeyDropped", "Rotate",
		"every user holds creds of the current signing key; the previous one is no longer accepted")
	return next, nil
}

// allReissued: after this pass every live user holds creds of the current
// signing key (no name conflict, no failed issue).
func allReissued(p userPlan, done map[types.UID]issued) bool {
	if len(p.Conflict) > 0 {
		return false
	}
	for _, is := range p.Issue {
		if done[is.User.UID].Err != nil {
			return false
		}
	}
	return true
}

// rotationVerdict is the SigningKeyRotated condition, or nil before any
// rotation.
func rotationVerdict(keys accounts.AccountKeys, p userPlan, done map[types.UID]issued) *status.Verdict {
	if keys.Rotation.For == "" {
		return nil
	}
	if keys.PreviousSigningKey == "" {
		return &status.Verdict{Type: v1alpha1.ConditionSigningKeyRotated, Status: metav1.ConditionTrue, Reason: "Rotated",
			Message: "every user holds creds of the current signing key; the previous one is no longer accepted"}
	}
	users := len(p.Issue) + len(p.Current) + len(p.Conflict)
	current := len(p.Current)
	for _, is := range p.Issue {
		if done[is.User.UID].Err == nil {
			current++
		}
	}
	return &status.Verdict{Type: v1alpha1.ConditionSigningKeyRotated, Status: metav1.ConditionFalse, Reason: "Reissuing",
		Message: fmt.Sprintf("%d of %d users hold creds of the new signing key; the previous one stays until %s and every user does",
			current, users, time.Unix(keys.Rotation.PreviousUntil, 0).UTC().Format(time.RFC3339))}
}

// nextPass is when an account's pass runs again with nothing changed: at
// the resync, or when a kept previous key may go.
func nextPass(keys accounts.AccountKeys, now time.Time) time.Duration {
	if keys.PreviousSigningKey == "" {
		return resync
	}
	return min(resync, max(time.Second, time.Unix(keys.Rotation.PreviousUntil, 0).Sub(now)+time.Second))
}

func (r *Reconciler) grace() time.Duration {
	if r.SigningKeyGrace > 0 {
		return r.SigningKeyGrace
	}
	return DefaultSigningKeyGrace
}
