package accountcontroller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// peer is another account on the same cluster: what an importer sees, and
// the keys that sign the activations of its private exports.
type peer struct {
	accounts.Peer
	keys accounts.AccountKeys
}

// peers are the other accounts on cluster c whose keys exist, read from
// the cache (keys Secrets carry kubenats' label).
func (r *Reconciler) peers(ctx context.Context, c *v1alpha1.NatsCluster, self accounts.AccountRef) (map[accounts.AccountRef]peer, error) {
	var list v1alpha1.NatsAccountList
	if err := r.List(ctx, &list, client.MatchingFields{accountClusterIndex: c.Namespace + "/" + c.Name}); err != nil {
		return nil, err
	}
	out := map[accounts.AccountRef]peer{}
	for i := range list.Items {
		a := &list.Items[i]
		ref := accounts.AccountRef{Namespace: a.Namespace, Name: a.Name}
		if ref == self || !a.DeletionTimestamp.IsZero() {
			continue
		}
		var s corev1.Secret
		if err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: accounts.KeysSecretName(c.Name, ref)}, &s); err != nil {
			continue // not made yet (or not admitted): its exports are not there to import
		}
		if !metav1.IsControlledBy(&s, c) {
			continue
		}
		keys, err := accounts.ReadAccountKeysFor(ref, a.Status.PublicKey, s.Data)
		if err != nil {
			continue // keys not recorded for that account: never sign its activations with them
		}
		out[ref] = peer{Peer: accounts.Peer{PublicKey: keys.PublicKey, Exports: a.Spec.Exports}, keys: keys}
	}
	return out, nil
}

// signAccount signs a's JWT with the cluster's operator key, and the
// activations of its private imports with each exporter's signing key.
// refused are the imports left out, with the reason.
// limits are the account's limits as its cluster bounds them
// (accounts.BoundLimits), which the JWT carries instead of the spec's.
func signAccount(a *v1alpha1.NatsAccount, ref accounts.AccountRef, keys accounts.AccountKeys, peers map[accounts.AccountRef]peer,
	operator []byte, limits v1alpha1.AccountLimits) (string, []accounts.RefusedImport, error) {
	visible := make(map[accounts.AccountRef]accounts.Peer, len(peers))
	for ref, p := range peers {
		visible[ref] = p.Peer
	}
	spec := *a.Spec.DeepCopy()
	spec.Limits = limits
	claims, acts, refused := accounts.AccountClaims(accounts.Account{Ref: ref, Spec: spec,
		PublicKey: keys.PublicKey, SigningKey: keys.SigningKey, PreviousSigningKey: keys.PreviousSigningKey,
		Revoked: keys.Revoked}, visible)
	text, err := accounts.SignAccount(claims, acts, operator, func(exporter accounts.AccountRef) ([]byte, string, bool) {
		p, ok := peers[exporter]
		return p.keys.SigningSeed, p.keys.PublicKey, ok
	})
	return text, refused, err
}
