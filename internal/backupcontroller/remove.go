package backupcontroller

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jobs"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// +kubebuilder:rbac:groups=kubenats.io,resources=backups/finalizers,verbs=update

// removeData runs when a Backup is deleted. One made by a schedule
// carries BackupDataFinalizer; when the schedule's retention deleted it
// (AnnotationExpired), its data is deleted first, by a Job of its own, and
// the Backup goes once the Job reports it done. Any other Backup leaves
// its data where it is: deleted by hand, or with its namespace, whose
// loss is what the backup is for.
func (r *Reconciler) removeData(ctx context.Context, b *v1alpha1.Backup) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(b, v1alpha1.BackupDataFinalizer) {
		return ctrl.Result{}, nil
	}
	if _, expired := b.Annotations[v1alpha1.AnnotationExpired]; !expired {
		return ctrl.Result{}, r.release(ctx, b) // the data stays
	}
	if b.Status.Phase != v1alpha1.BackupSucceeded || b.Status.Path == "" {
		return ctrl.Result{}, r.release(ctx, b) // nothing was written
	}
	var job batchv1.Job
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.RemoveJobName()}, &job)
	switch {
	case apierrors.IsNotFound(err):
		if refusal, err := r.storeSecretsRefused(ctx, b); err != nil || refusal != "" {
			if refusal != "" {
				r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "RemoveFailed", "Remove", "%s", refusal)
			}
			return ctrl.Result{}, err // the Secret's change wakes the pass
		}
		return ctrl.Result{}, r.Applier.Apply(ctx, b, render.RemoveJob(b, r.Image))
	case err != nil:
		return ctrl.Result{}, err
	}
	pods, err := jobs.Pods(ctx, r.Client, &job)
	if err != nil {
		return ctrl.Result{}, err
	}
	done, result := status.RemoveJob(&job, pods)
	switch {
	case done:
		r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "DataRemoved", "Remove", "backup data %s removed", b.Status.Path)
		return ctrl.Result{}, r.release(ctx, b)
	case result.Phase == v1alpha1.BackupFailed:
		// Kept, and said: the user decides (remove the finalizer to
		// let the Backup go with its data in place).
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "RemoveFailed", "Remove", "%s", result.Pass.Message)
		result.Phase, result.Pass.Reason = v1alpha1.BackupSucceeded, "RemoveFailed"
		return ctrl.Result{}, r.write(ctx, b, result)
	}
	return ctrl.Result{}, nil // the Job's end wakes the pass
}

func (r *Reconciler) release(ctx context.Context, b *v1alpha1.Backup) error {
	patch := client.MergeFrom(b.DeepCopy())
	controllerutil.RemoveFinalizer(b, v1alpha1.BackupDataFinalizer)
	return client.IgnoreNotFound(r.Patch(ctx, b, patch))
}
