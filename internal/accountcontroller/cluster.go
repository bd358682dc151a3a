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

// admittedCluster is a's cluster if it admits a's namespace, else nil.
func (r *Reconciler) admittedCluster(ctx context.Context, a *v1alpha1.NatsAccount) (*v1alpha1.NatsCluster, error) {
	var c v1alpha1.NatsCluster
	switch err := r.Get(ctx, clusterKey(a), &c); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var labels map[string]string
	if accounts.NeedsNamespaceLabels(&c, a.Namespace) {
		var ns corev1.Namespace
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: a.Namespace}, &ns); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		labels = ns.Labels
	}
	if !accounts.Admits(&c, a.Namespace, labels) {
		return nil, nil
	}
	return &c, nil
}
