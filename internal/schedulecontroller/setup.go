package schedulecontroller

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pause"
)

// SetupWithManager registers the reconciler: a schedule's pass runs when
// its spec changes, when one of its Backups changes (one ended: the next
// may be due, an old one may expire), and when its next time comes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("scheduledbackup").
		For(&v1alpha1.ScheduledBackup{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, pause.Changed{}))).
		Watches(&v1alpha1.Backup{}, handler.EnqueueRequestsFromMapFunc(scheduleOf)).
		Complete(r)
}

func scheduleOf(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1alpha1.LabelScheduledBackup]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}
