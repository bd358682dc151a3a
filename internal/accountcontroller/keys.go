package accountcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/render"
)

// Labels and annotations of the Secrets this package writes.
const (
	// LabelAccount names, on a user's creds Secret, its account (in the
	// Secret's namespace): a creds Secret changed or deleted wakes it.
	LabelAccount = "kubenats.io/account"
	// AnnotationAccount names, on a keys Secret, the account it is for.
	AnnotationAccount = "kubenats.io/account"
	// AnnotationCredsDigest is what a creds Secret was written for
	// (claims, keys, URL, CA): a hash, nothing secret.
	AnnotationCredsDigest = "kubenats.io/creds-digest"
)

// problem is what stops an account's pass, as its condition says it.
type problem struct{ reason, message string }

// accountKeys reads a's keys from their Secret in the cluster's namespace,
// or makes them once. It reads the API server, not the cache: a Secret
// made a moment ago and not yet cached must not get a second identity.
// Keys gone after the account was made are not made anew (see
// ReasonAccountKeysMissing).
func (r *Reconciler) accountKeys(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount) (accounts.AccountKeys, *problem, error) {
	ref := accountRef(a)
	keys, found, refusal, err := r.findKeys(ctx, c, a)
	switch {
	case err != nil || refusal != nil:
		return keys, refusal, err
	case !found && a.Status.PublicKey != "":
		return accounts.AccountKeys{}, &problem{v1alpha1.ReasonAccountKeysMissing,
			"the account's keys are gone from the cluster's namespace; new keys would make it a new account " +
				"(every user's credentials refused, its JetStream data left behind): delete and re-create the NatsAccount to accept that"}, nil
	case !found:
		keys, err := accounts.NewAccountKeys(ref)
		if err != nil {
			return keys, nil, err
		}
		return keys, nil, r.writeKeys(ctx, c, keys)
	}
	if len(keys.OperatorCreds) == 0 {
		if keys, err = keys.WithOperatorUser(); err != nil {
			return keys, nil, err
		}
		return keys, nil, r.writeKeys(ctx, c, keys)
	}
	return keys, nil, nil
}

// keysOfAnotherAccount is the problem of keys recorded for another
// account: the tenant is not told which.
func keysOfAnotherAccount(err error) *problem {
	return &problem{v1alpha1.ReasonAccountKeysMismatch, "the Secret of the account's keys in the cluster's namespace was not made " +
		"for this account (" + err.Error() + "); nothing is signed, issued or revoked with it: the cluster's administrators must remove it"}
}

// findKeys reads a's keys, read past the cache, holding them to the
// account they record (accounts.ReadAccountKeysFor): found is false when
// there are none yet. Keys an earlier version kept under the legacy name
// are migrated once, if they record exactly a (accounts.AdoptLegacyKeys);
// a legacy Secret of another account is left alone and a gets keys of
// its own.
func (r *Reconciler) findKeys(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount) (_ accounts.AccountKeys, found bool, _ *problem, _ error) {
	ref := accountRef(a)
	var s corev1.Secret
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: accounts.KeysSecretName(c.Name, ref)}, &s); {
	case apierrors.IsNotFound(err):
		return r.migrateLegacyKeys(ctx, c, a)
	case err != nil:
		return accounts.AccountKeys{}, false, nil, err
	case !metav1.IsControlledBy(&s, c):
		return accounts.AccountKeys{}, false, &problem{v1alpha1.ReasonNameConflict, "the Secret for the account's keys exists in the cluster's namespace and is not the cluster's"}, nil
	}
	keys, err := accounts.ReadAccountKeysFor(ref, a.Status.PublicKey, s.Data)
	switch {
	case errors.Is(err, accounts.ErrKeysOfAnotherAccount):
		log.FromContext(ctx).Info("an account's keys Secret records another account; refused", "secret", s.Name,
			"recordedFor", s.Annotations[AnnotationAccount])
		return keys, false, keysOfAnotherAccount(err), nil
	case err != nil:
		return keys, false, &problem{v1alpha1.ReasonSecretInvalid, "the account's keys: " + err.Error()}, nil
	}
	if err := r.retireLegacyKeysLeft(ctx, c, ref); err != nil {
		return keys, false, nil, err
	}
	return keys, true, nil, nil
}

// retireLegacyKeysLeft empties the legacy Secret of ref's keys when one
// for exactly ref still holds seeds (a migration whose last step
// failed). Read from the cache (keys Secrets carry kubenats' label): a
// pass that finds its keys pays no API call for it.
func (r *Reconciler) retireLegacyKeysLeft(ctx context.Context, c *v1alpha1.NatsCluster, ref accounts.AccountRef) error {
	var s corev1.Secret
	switch err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: accounts.LegacyKeysSecretName(c.Name, ref)}, &s); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	if !metav1.IsControlledBy(&s, c) || s.Annotations[AnnotationAccount] != ref.String() || len(s.Data[accounts.AccountSeedKey]) == 0 {
		return nil // none left, or another account's, which it migrates itself
	}
	if err := r.retireLegacyKeys(ctx, c, &s, ref); err != nil {
		return fmt.Errorf("emptying the account's legacy keys Secret: %w", err)
	}
	return nil
}

// migrateLegacyKeys takes a's keys from the Secret under the legacy name
// when it records exactly a, writes them under the full name with their
// record, and then empties the legacy Secret of its seeds, so that it is
// never read again (a full-name Secret deleted later must not bring back
// the legacy one's older revocations).
func (r *Reconciler) migrateLegacyKeys(ctx context.Context, c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount) (_ accounts.AccountKeys, found bool, _ *problem, _ error) {
	ref := accountRef(a)
	var s corev1.Secret
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: accounts.LegacyKeysSecretName(c.Name, ref)}, &s); {
	case apierrors.IsNotFound(err):
		return accounts.AccountKeys{}, false, nil, nil
	case err != nil:
		return accounts.AccountKeys{}, false, nil, err
	case !metav1.IsControlledBy(&s, c) || len(s.Data[accounts.AccountSeedKey]) == 0:
		return accounts.AccountKeys{}, false, nil, nil
	}
	keys, err := accounts.AdoptLegacyKeys(ref, s.Annotations[AnnotationAccount], a.Status.PublicKey, s.Data)
	if err != nil {
		// Another account's (a name both share), or one this account's
		// status does not name: never used for it.
		log.FromContext(ctx).Info("a legacy keys Secret is not this account's; not migrated", "secret", s.Name,
			"recordedFor", s.Annotations[AnnotationAccount], "reason", err.Error())
		return accounts.AccountKeys{}, false, nil, nil
	}
	if err := r.writeKeys(ctx, c, keys); err != nil {
		return accounts.AccountKeys{}, false, nil, fmt.Errorf("migrating the account's keys: %w", err)
	}
	if err := r.retireLegacyKeys(ctx, c, &s, ref); err != nil {
		return accounts.AccountKeys{}, false, nil, fmt.Errorf("emptying the account's legacy keys Secret: %w", err)
	}
	r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "KeysMigrated", "Migrate",
		"the account's keys moved to a Secret named after the account's full digest, with a record of the account")
	return keys, true, nil, nil
}

// retireLegacyKeys empties the legacy Secret s of everything but the
// name of the one that replaced it, by a merge patch that removes every
// other key whoever wrote it, refused if s changed since it was read.
func (r *Reconciler) retireLegacyKeys(ctx context.Context, c *v1alpha1.NatsCluster, s *corev1.Secret, ref accounts.AccountRef) error {
	before := s.DeepCopy()
	s.Data = map[string][]byte{legacyMovedToKey: []byte(accounts.KeysSecretName(c.Name, ref))}
	return r.Patch(ctx, s, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// legacyMovedToKey names, in an emptied legacy keys Secret, the Secret
// its keys moved to.
const legacyMovedToKey = "moved-to"

func accountRef(a *v1alpha1.NatsAccount) accounts.AccountRef {
	return accounts.AccountRef{Namespace: a.Namespace, Name: a.Name}
}

// writeKeys applies the keys Secret, owned by the cluster (it goes with
// the cluster; no tenant can read the cluster's namespace).
func (r *Reconciler) writeKeys(ctx context.Context, c *v1alpha1.NatsCluster, keys accounts.AccountKeys) error {
	ref := keys.Account
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c.Namespace,
			Name:        accounts.KeysSecretName(c.Name, ref),
			Labels:      map[string]string{render.LabelManagedBy: render.ManagedBy},
			Annotations: map[string]string{AnnotationAccount: ref.String()},
		},
		Type: corev1.SecretTypeOpaque,
		Data: keys.Data(),
	}
	return r.Applier.Apply(ctx, c, s)
}

// revoke records users as revoked in the keys Secret, before the push
// that carries the revocation: the next JWT is signed from the Secret.
func (r *Reconciler) revoke(ctx context.Context, c *v1alpha1.NatsCluster, keys accounts.AccountKeys, users []string) (accounts.AccountKeys, error) {
	if len(users) == 0 {
		return keys, nil
	}
	next, changed, err := keys.Revoke(users, time.Now().Unix())
	if err != nil || !changed {
		return keys, err
	}
	if err := r.writeKeys(ctx, c, next); err != nil {
		return keys, fmt.Errorf("recording the revocation: %w", err)
	}
	return next, nil
}

// operatorSigner is the key that signs the accounts of cluster c (the
// operator's signing key, see accounts.OperatorSigner) and its public
// key, from its trust Secret (which the NatsCluster's pass made), read
// past the cache: a rotation's next step waits until every account shows
// the new key, so the pass that follows the step must sign with it.
func (r *Reconciler) operatorSigner(ctx context.Context, c *v1alpha1.NatsCluster) ([]byte, string, error) {
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.TrustSecretName()}, &s); err != nil {
		return nil, "", fmt.Errorf("the cluster's NATS operator keys: %w", err)
	}
	if !metav1.IsControlledBy(&s, c) {
		return nil, "", fmt.Errorf("the cluster's NATS operator keys are not the cluster's")
	}
	if err := accounts.CheckTrust(s.Data); err != nil {
		return nil, "", err
	}
	return accounts.OperatorSigner(accounts.TrustValues(s.Data))
}
