package accountcontroller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	ref := accounts.AccountRef{Namespace: a.Namespace, Name: a.Name}
	name := accounts.KeysSecretName(c.Name, ref)
	var s corev1.Secret
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s); {
	case apierrors.IsNotFound(err):
		if a.Status.PublicKey != "" {
			return accounts.AccountKeys{}, &problem{v1alpha1.ReasonAccountKeysMissing,
				"the account's keys are gone from the cluster's namespace; new keys would make it a new account " +
					"(every user's credentials refused, its JetStream data left behind): delete and re-create the NatsAccount to accept that"}, nil
		}
		keys, err := accounts.NewAccountKeys()
		if err != nil {
			return keys, nil, err
		}
		return keys, nil, r.writeKeys(ctx, c, ref, keys)
	case err != nil:
		return accounts.AccountKeys{}, nil, err
	case !metav1.IsControlledBy(&s, c):
		return accounts.AccountKeys{}, &problem{v1alpha1.ReasonNameConflict, "the Secret for the account's keys exists in the cluster's namespace and is not the cluster's"}, nil
	}
	keys, err := accounts.ReadAccountKeys(s.Data)
	if err != nil {
		return keys, &problem{v1alpha1.ReasonSecretInvalid, "the account's keys: " + err.Error()}, nil
	}
	if len(keys.OperatorCreds) == 0 {
		if keys, err = keys.WithOperatorUser(); err != nil {
			return keys, nil, err
		}
		return keys, nil, r.writeKeys(ctx, c, ref, keys)
	}
	return keys, nil, nil
}

// writeKeys applies the keys Secret, owned by the cluster (it goes with
// the cluster; no tenant can read the cluster's namespace).
func (r *Reconciler) writeKeys(ctx context.Context, c *v1alpha1.NatsCluster, ref accounts.AccountRef, keys accounts.AccountKeys) error {
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
func (r *Reconciler) revoke(ctx context.Context, c *v1alpha1.NatsCluster, ref accounts.AccountRef, keys accounts.AccountKeys, users []string) (accounts.AccountKeys, error) {
	if len(users) == 0 {
		return keys, nil
	}
	next, changed, err := keys.Revoke(users, time.Now().Unix())
	if err != nil || !changed {
		return keys, err
	}
	if err := r.writeKeys(ctx, c, ref, next); err != nil {
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
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: render.TrustSecretName(c)}, &s); err != nil {
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
