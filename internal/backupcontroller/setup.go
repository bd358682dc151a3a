package backupcontroller

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
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
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/usersecrets"
	"github.com/kubenats/kubenats/internal/wake"
)

// clusterIndex finds the Backups of a NatsCluster, by its namespace/name:
// a tenant's Backup may be in another namespace than its cluster.
const clusterIndex = "spec.cluster"

// SetupWithManager registers the reconciler: a Backup's pass runs when it
// is made, when its Job or the Job's pod changes (a pod's termination
// message arrives with the pod, before the Job counts it), and when its
// cluster changes (it became available).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Backup{}, clusterIndex, func(o client.Object) []string {
		ns, name := o.(*v1alpha1.Backup).ClusterKey()
		return []string{ns + "/" + name}
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Backup{}, usersecrets.Index, backupSecrets); err != nil {
		return err
	}
	backupPods := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[render.LabelComponent] == render.BackupComponent
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("backup").
		For(&v1alpha1.Backup{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, wake.DeletionStarted{}, pause.Changed{}))).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(backupOfPod), builder.WithPredicates(backupPods)).
		Watches(&v1alpha1.NatsCluster{}, handler.EnqueueRequestsFromMapFunc(r.backupsOf)).
		WatchesRawSource(usersecrets.Source(r.UserSecrets, r.Client, func() client.ObjectList { return &v1alpha1.BackupList{} })).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}

// backupSecrets are the Secrets a Backup names: its object store's.
func backupSecrets(o client.Object) []string {
	if s := o.(*v1alpha1.Backup).Spec.S3; s != nil {
		return s.SecretNames()
	}
	return nil
}

// backupOfPod: a backup pod's instance label is its Backup's name. The
// pass reads only pods its Job controls, so a pod that claims the label
// wakes a pass and changes nothing.
func backupOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[render.LabelInstance]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// backupsOf are the Backups of cluster o that have not ended.
func (r *Reconciler) backupsOf(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.BackupList
	if err := r.List(ctx, &list, client.MatchingFields{clusterIndex: o.GetNamespace() + "/" + o.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range list.Items {
		if b.Status.Phase != v1alpha1.BackupSucceeded && b.Status.Phase != v1alpha1.BackupFailed {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}})
		}
	}
	return out
}
