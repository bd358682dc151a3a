package accountcontroller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
)

// clusterNotAdmitted is the one text of every refusal by a cluster: a
// tenant cannot tell a cluster that is not there from one that does not
// admit it.
const clusterNotAdmitted = "the NatsCluster is not there, is not in auth mode jwt, or does not admit accounts from this namespace"

// clusterKey is an account's cluster, as namespace/name.
func clusterKey(a *v1alpha1.NatsAccount) client.ObjectKey {
	ns, name := accounts.ClusterOf(a)
	return client.ObjectKey{Namespace: ns, Name: name}
}

// accountCluster is a's cluster when it is there, runs mode jwt and is
// not being deleted (else nil), and whether it admits a's namespace. A
// cluster that does not admit it is still returned: an account it
// admitted before is disabled on its servers (suspend).
func (r *Reconciler) accountCluster(ctx context.Context, a *v1alpha1.NatsAccount) (*v1alpha1.NatsCluster, bool, error) {
	var c v1alpha1.NatsCluster
	switch err := r.Get(ctx, clusterKey(a), &c); {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	if c.Spec.Auth.Mode != v1alpha1.AuthJWT || !c.DeletionTimestamp.IsZero() {
		return nil, false, nil
	}
	var labels map[string]string
	if accounts.NeedsNamespaceLabels(&c, a.Namespace) {
		var ns corev1.Namespace
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Name: a.Namespace}, &ns); {
		case apierrors.IsNotFound(err):
			return &c, false, nil
		case err != nil:
			return nil, false, err
		}
		labels = ns.Labels
	}
	return &c, accounts.Admits(&c, a.Namespace, labels), nil
}
