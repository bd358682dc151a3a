package jetstreamcontroller

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/namespaceshare"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// clusterRefIndex indexes JetStream resources by the NatsCluster they name,
// so that a cluster becoming available wakes the resources waiting for it.
const clusterRefIndex = "kubenats.io/cluster"

// SetupWithManager registers the reconciler for its kind with workers
// parallel reconciles, of which one namespace's resources hold at most
// perNamespace (a quarter when zero: namespaceshare.Share). wakes queues the
// resources an advisory says changed on the server.
func (r *Reconciler[T, C]) SetupWithManager(mgr ctrl.Manager, workers, perNamespace int, wakes *Wakes) error {
	obj := r.Kind.New()
	err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, clusterRefIndex, func(o client.Object) []string {
		t := o.(v1alpha1.JetStreamObject).GetTarget()
		if t.Cluster == nil {
			return nil
		}
		ns := t.Cluster.Namespace
		if ns == "" {
			ns = o.GetNamespace()
		}
		return []string{ns + "/" + t.Cluster.Name}
	})
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, usersecrets.Index, jetStreamSecrets); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Kind.Name()).
		// The pause annotation too: a resume must run the pass that
		// picks up what changed meanwhile, a pause the one that says so.
		For(obj, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, pause.Changed{}))).
		Watches(&v1alpha1.NatsCluster{}, handler.EnqueueRequestsFromMapFunc(r.referencing)).
		// A Stream's restore Job (restore.go) wakes it as it ends.
		Owns(&batchv1.Job{}).
		WatchesRawSource(wakes.source()).
		WatchesRawSource(usersecrets.Source(r.UserSecrets, r.Client, r.Kind.NewList)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, ReconciliationTimeout: jetStreamReconcileTimeout}).
		Complete(namespaceshare.Share(r, workers, perNamespace))
}

// +kubebuilder:rbac:groups=kubenats.io,resources=streams;consumers;keyvalues;objectstores,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kubenats.io,resources=streams/status;consumers/status;keyvalues/status;objectstores/status,verbs=update
// +kubebuilder:rbac:groups=kubenats.io,resources=streams/finalizers;consumers/finalizers;keyvalues/finalizers;objectstores/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=kubenats.io,resources=backups,verbs=get;list;watch

// referencing lists the resources that name a NatsCluster.
func (r *Reconciler[T, C]) referencing(ctx context.Context, c client.Object) []reconcile.Request {
	list := r.Kind.NewList()
	if err := r.List(ctx, list, client.MatchingFields{clusterRefIndex: c.GetNamespace() + "/" + c.GetName()}); err != nil {
		return nil
	}
	return usersecrets.RequestsFor(list)
}

// jetStreamSecrets are the user Secrets a JetStream resource names.
func jetStreamSecrets(o client.Object) []string {
	var out []string
	if s, ok := o.(*v1alpha1.Stream); ok && s.Spec.Restore != nil && s.Spec.Restore.S3 != nil {
		out = append(out, s.Spec.Restore.S3.SecretNames()...)
	}
	conn := o.(v1alpha1.JetStreamObject).GetTarget().Connection
	if conn == nil {
		return out
	}
	if conn.CredentialsSecretRef != nil {
		out = append(out, conn.CredentialsSecretRef.Name)
	}
	if conn.TLSSecretRef != nil && (conn.CredentialsSecretRef == nil || conn.TLSSecretRef.Name != conn.CredentialsSecretRef.Name) {
		out = append(out, conn.TLSSecretRef.Name)
	}
	return out
}
