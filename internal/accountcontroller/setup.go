package accountcontroller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/namespaceshare"
	"github.com/kubenats/kubenats/internal/wake"
)

// The cache's indexes: a user by its account's name, an account by its
// cluster (namespace/name).
const (
	userAccountIndex    = "spec.account"
	accountClusterIndex = "spec.cluster"
)

// defaultWorkers: account passes are short (a Secret or two, one push).
const defaultWorkers = 4

// SetupWithManager registers the reconciler: an account's pass runs when
// it changes, when one of its users or their creds Secrets does, when
// another account of its cluster changes its spec (its exports may now
// admit an import), and when its cluster changes (servers become ready).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.NatsUser{}, userAccountIndex, func(o client.Object) []string {
		return []string{o.(*v1alpha1.NatsUser).Spec.Account}
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.NatsAccount{}, accountClusterIndex, func(o client.Object) []string {
		k := clusterKey(o.(*v1alpha1.NatsAccount))
		return []string{k.Namespace + "/" + k.Name}
	}); err != nil {
		return err
	}
	workers := r.Workers
	if workers <= 0 {
		workers = defaultWorkers
	}
	specOrDeletion := predicate.Or(predicate.GenerationChangedPredicate{}, wake.DeletionStarted{})
	// The events that carry a revocation queue their account first
	// (priority.go): a user's or the account's deletion, a creds Secret
	// changed or deleted.
	return ctrl.NewControllerManagedBy(mgr).
		Named("natsaccount").
		// Annotations too: a rotation is asked for with one.
		For(&v1alpha1.NatsAccount{}, builder.WithPredicates(predicate.Or[client.Object](specOrDeletion, predicate.AnnotationChangedPredicate{}))).
		Watches(&v1alpha1.NatsAccount{}, revocationAware(self, deletionRevokes), builder.WithPredicates(wake.DeletionStarted{})).
		Watches(&v1alpha1.NatsAccount{}, handler.EnqueueRequestsFromMapFunc(r.accountsBeside),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.NatsUser{}, revocationAware(userAccount, deletionRevokes), builder.WithPredicates(specOrDeletion)).
		Watches(&corev1.Secret{}, revocationAware(credsAccount, credsRevoke)).
		Watches(&v1alpha1.NatsCluster{}, handler.EnqueueRequestsFromMapFunc(r.accountsOn)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		// One namespace's accounts hold at most their share of the
		// workers: a cluster whose servers stay silent holds its
		// namespace's passes, not the others' revocations.
		Complete(namespaceshare.Share(revocationsFirst{r}, workers, r.WorkersPerNamespace))
}

func userAccount(_ context.Context, o client.Object) []reconcile.Request {
	u, ok := o.(*v1alpha1.NatsUser)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: u.Namespace, Name: u.Spec.Account}}}
}

// credsAccount maps a creds Secret to its account: one changed or deleted
// by anyone is written again (with a new key, the old one revoked).
func credsAccount(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[LabelAccount]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// accountsOn are the accounts on cluster o.
func (r *Reconciler) accountsOn(ctx context.Context, o client.Object) []reconcile.Request {
	return r.accountsOfCluster(ctx, o.GetNamespace()+"/"+o.GetName())
}

// accountsBeside are the accounts on the cluster of account o.
func (r *Reconciler) accountsBeside(ctx context.Context, o client.Object) []reconcile.Request {
	a, ok := o.(*v1alpha1.NatsAccount)
	if !ok {
		return nil
	}
	k := clusterKey(a)
	return r.accountsOfCluster(ctx, k.Namespace+"/"+k.Name)
}

func (r *Reconciler) accountsOfCluster(ctx context.Context, key string) []reconcile.Request {
	var list v1alpha1.NatsAccountList
	if err := r.List(ctx, &list, client.MatchingFields{accountClusterIndex: key}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, a := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Name}})
	}
	return out
}
