// Package backupcontroller runs Backups: for each, one Job of the
// operator's image that takes the backup in a pod of its own, and the
// Backup's status read from how that Job ended. The operator never
// touches a backup's bytes, and never deletes one: the Job is the
// Backup's, the data on the claim is the user's.
package backupcontroller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/jobs"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// +kubebuilder:rbac:groups=kubenats.io,resources=backups,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kubenats.io,resources=backups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch

// Reasons a Backup waits before its Job exists.
const (
	reasonClusterNotFound = "ClusterNotFound"
	reasonClusterNotReady = "ClusterNotReady"
	reasonNotSupported    = "NotSupported"
	reasonSecretNotUsable = "SecretNotFound"
	reasonUserNotReady    = "UserNotReady"
)

// waitForCluster is how soon a Backup whose cluster is not ready looks
// again; the cluster's own changes wake it sooner (setup.go).
const waitForCluster = 10 * time.Second

// Reconciler runs Backups.
type Reconciler struct {
	client.Client
	Applier  *apply.Applier
	Recorder recorder.EventRecorder
	// Image is the operator's own image, which carries kubenats-backup.
	Image string
	// OperatorPaused (--pause-reconciliation) starts no Job, as the
	// Backup's own pause annotation does; a Job running goes on.
	OperatorPaused bool
	// UserSecrets holds the Secrets their owners opted in for kubenats:
	// an object store's keys are mounted only from one of them.
	UserSecrets cache.Cache
}

// Reconcile is one pass: make the Job if there is none, then read it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b v1alpha1.Backup
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		return r.removeData(ctx, &b)
	}
	if phase := b.Status.Phase; phase == v1alpha1.BackupSucceeded || phase == v1alpha1.BackupFailed {
		return ctrl.Result{}, nil // final: a backup is a fact about the past
	}
	var job batchv1.Job
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.BackupJobName()}, &job)
	switch {
	case apierrors.IsNotFound(err):
		if p := pause.Of(&b, r.OperatorPaused); p.Paused {
			return ctrl.Result{}, r.write(ctx, &b, pending(p.Reason, p.Message))
		}
		return r.startJob(ctx, &b)
	case err != nil:
		return ctrl.Result{}, err
	case !metav1.IsControlledBy(&job, &b):
		return ctrl.Result{}, r.write(ctx, &b, status.BackupResult{Phase: v1alpha1.BackupFailed, Pass: status.Pass{Stalled: true,
			Reason: "JobConflict", Message: (&apply.ConflictError{Kind: "Job", Name: job.Name}).Error()}})
	}
	pods, err := jobs.Pods(ctx, r.Client, &job)
	if err != nil {
		return ctrl.Result{}, err
	}
	result := status.BackupJob(&job, pods)
	if result.Terminal() {
		if b.Status.Phase != result.Phase {
			r.announce(&b, result)
		}
		return ctrl.Result{}, r.write(ctx, &b, result)
	}
	// Running: its pod says how far it has come, asked again shortly.
	result.Progress = jobs.Progress(ctx, pods, b.Status.Progress)
	return lookAgain(jobs.ProgressLook, r.write(ctx, &b, result))
}

// startJob makes b's Job once its cluster can be reached.
func (r *Reconciler) startJob(ctx context.Context, b *v1alpha1.Backup) (ctrl.Result, error) {
	if refusal, err := r.storeSecretsRefused(ctx, b); err != nil {
		return ctrl.Result{}, err
	} else if refusal != "" {
		// A Secret opted in later wakes the Backup (setup.go).
		return ctrl.Result{}, r.write(ctx, b, pending(reasonSecretNotUsable, refusal))
	}
	// The user first: for a cluster of another namespace, a Ready user
	// of an account on it is what says this namespace is let in, before
	// anything of that cluster is told.
	clusterNS, clusterName := b.ClusterKey()
	var user *v1alpha1.NatsUser
	if b.Spec.User != "" {
		u, refusal, err := jobs.User(ctx, r.Client, b.Namespace, b.Spec.User, clusterNS, clusterName, "")
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case refusal != "":
			return lookAgain(waitForCluster, r.write(ctx, b, pending(reasonUserNotReady, refusal)))
		}
		user = u
	}
	var c v1alpha1.NatsCluster
	err := r.Get(ctx, client.ObjectKey{Namespace: clusterNS, Name: clusterName}, &c)
	switch {
	case apierrors.IsNotFound(err):
		return lookAgain(waitForCluster, r.write(ctx, b, pending(reasonClusterNotFound,
			fmt.Sprintf("NatsCluster %s/%s does not exist", clusterNS, clusterName))))
	case err != nil:
		return ctrl.Result{}, err
	case !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionAvailable):
		return lookAgain(waitForCluster, r.write(ctx, b, pending(reasonClusterNotReady,
			fmt.Sprintf("NatsCluster %s/%s is not available yet", clusterNS, c.Name))))
	}
	job, err := render.BackupJob(b, &c, user, r.Image)
	if err != nil {
		result := status.BackupResult{Phase: v1alpha1.BackupFailed, Pass: status.Pass{Stalled: true, Reason: reasonNotSupported, Message: err.Error()}}
		r.announce(b, result)
		return ctrl.Result{}, r.write(ctx, b, result)
	}
	if err := r.Applier.Apply(ctx, b, job); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "JobCreated", "Backup", "Job %s takes the backup of stream %s", job.Name, b.Spec.Stream)
	return ctrl.Result{}, r.write(ctx, b, pending(status.ReasonBackupPending, "Job "+job.Name+" made"))
}

// storeSecretsRefused says why the Secrets of b's object store cannot be
// mounted into its Jobs: only opted-in Secrets are, or a tenant could send
// another's keys to a store of its choice.
func (r *Reconciler) storeSecretsRefused(ctx context.Context, b *v1alpha1.Backup) (string, error) {
	store := b.Spec.S3
	if store == nil {
		return "", nil
	}
	return usersecrets.Refused(ctx, r.UserSecrets, b.Namespace, store.CredentialsSecret, "spec.s3.credentialsSecret", store.CASecret, "spec.s3.caSecret")
}

// lookAgain is a pass that looks again after d, or fails with err: never
// both, as controller-runtime ignores the delay beside an error.
func lookAgain(d time.Duration, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d}, nil
}

func pending(reason, message string) status.BackupResult {
	return status.BackupResult{Phase: v1alpha1.BackupPending, Pass: status.Pass{Reason: reason, Message: message}}
}

func (r *Reconciler) announce(b *v1alpha1.Backup, result status.BackupResult) {
	kind := corev1.EventTypeNormal
	if result.Phase == v1alpha1.BackupFailed {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(b, nil, kind, result.Pass.Reason, "Backup", "%s", result.Pass.Message)
}

// write sets b's status from result, when it changed.
func (r *Reconciler) write(ctx context.Context, b *v1alpha1.Backup, result status.BackupResult) error {
	next := b.Status.DeepCopy()
	next.ObservedGeneration = b.Generation
	next.Phase = result.Phase
	next.JobName = b.BackupJobName()
	next.Conditions = status.ReadyConditions(b.Status.Conditions, b.Generation, metav1.Now(), result.Pass)
	next.Progress = result.Progress
	if set := result.Set; set != nil {
		next.Path, next.Streams = b.Where(), int32(min(set.Streams, 1<<30))
		next.Messages, next.Bytes, next.Consumers, next.DataSize = set.Messages, set.Bytes, int32(min(set.Consumers, 1<<30)), set.DataSize
		next.StartedAt, next.CompletedAt = &metav1.Time{Time: set.Started}, &metav1.Time{Time: set.Finished}
		next.Duration = set.Finished.Sub(set.Started).Round(time.Millisecond).String()
	}
	if m := result.Manifest; m != nil {
		next.Path = b.Where()
		next.Stream, next.FirstSequence, next.LastSequence = m.Stream, m.FirstSeq, m.LastSeq
		next.Messages, next.Bytes, next.Consumers = m.Messages, m.Bytes, int32(min(m.Consumers, 1<<30))
		next.DataFile, next.DataSize, next.SHA256 = m.DataFile, m.DataSize, m.SHA256
		next.StartedAt, next.CompletedAt = &metav1.Time{Time: m.Started}, &metav1.Time{Time: m.Finished}
		next.Duration = m.Finished.Sub(m.Started).Round(time.Millisecond).String()
	}
	if equality.Semantic.DeepEqual(&b.Status, next) {
		return nil
	}
	b.Status = *next
	return client.IgnoreNotFound(r.Status().Update(ctx, b))
}
