package jetstreamcontroller

import (
	"cmp"
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jobs"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// Reasons of a Stream made from a backup (spec.restore).
const (
	reasonRestoring       = "Restoring"
	reasonRestored        = "Restored"
	reasonRestoreRefused  = "RestoreRefused"
	reasonBackupNotReady  = "BackupNotReady"
	reasonRestoreNotReady = "RestoreNotReady"
)

// restoreAction is what a pass does about a Stream's restore.
type restoreAction int

const (
	// restoreNone: no restore asked, or nothing left to do for it; the
	// pass syncs as always.
	restoreNone restoreAction = iota
	// restoreStart: make the restore Job.
	restoreStart
	// restoreWait: the Job runs; the stream it is making is written by
	// nobody else meanwhile.
	restoreWait
	// restoreFailed: the Job gave up; the Stream says why.
	restoreFailed
	// restoreAdopt: the Job made the stream; the pass takes it as the
	// resource's own (event Restored) and brings it to the spec.
	restoreAdopt
	// restoreRefuse: the server has a stream of that name that neither
	// the resource nor its restore made: a restore never overwrites.
	restoreRefuse
)

// decideRestore is the restore's next step: from whether one is asked
// for, its Job's phase ("" while there is no Job), whether the server has
// the stream and whether the resource made it.
func decideRestore(wanted bool, job v1alpha1.BackupPhase, onServer, mine bool) restoreAction {
	switch {
	case !wanted:
		return restoreNone
	case job == v1alpha1.BackupPending || job == v1alpha1.BackupRunning:
		return restoreWait
	case job == v1alpha1.BackupFailed:
		return restoreFailed
	case job == v1alpha1.BackupSucceeded && onServer && !mine:
		return restoreAdopt
	case job == v1alpha1.BackupSucceeded:
		// Brought to the spec already, or deleted since: made again as
		// the spec says, as any deleted stream is (docs/backup.md).
		return restoreNone
	case !onServer:
		return restoreStart
	case mine:
		return restoreNone // restore asked for after the resource made its stream
	}
	return restoreRefuse
}

// restoreStep carries out the restore's step for obj, when it is a Stream
// with spec.restore. adopt says that the pass takes the stream on the
// server as its own; stop, when not nil, ends the pass.
func (r *Reconciler[T, C]) restoreStep(ctx context.Context, obj T, onServer bool, ownerMark string) (adopt bool, stop *outcome) {
	s, ok := any(obj).(*v1alpha1.Stream)
	if !ok || s.Spec.Restore == nil {
		return false, nil
	}
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: render.RestoreJobName(s)}, job)
	var result status.RestoreResult
	var progress *v1alpha1.TransferProgress
	switch {
	case apierrors.IsNotFound(err):
		job = nil
	case err != nil:
		return false, &outcome{reason: reasonRestoreNotReady, message: err.Error(), retry: true}
	case foreignJob(job, s) != nil:
		return false, foreignJob(job, s)
	default:
		pods, err := jobs.Pods(ctx, r.Client, job)
		if err != nil {
			return false, &outcome{reason: reasonRestoreNotReady, message: err.Error(), retry: true}
		}
		result = status.RestoreJob(job, pods)
		if result.Phase == v1alpha1.BackupRunning {
			progress = jobs.Progress(ctx, pods, s.Status.Restore)
		}
	}
	claim, _ := claimOf(ownerMark, r.owner(obj))
	switch decideRestore(true, result.Phase, onServer, onServer && claim == claimMine) {
	case restoreWait:
		return false, &outcome{reason: reasonRestoring, message: result.Pass.Message, retry: true, restore: progress}
	case restoreFailed:
		return false, &outcome{reason: result.Pass.Reason, message: "the restore failed: " + result.Pass.Message}
	case restoreStart:
		out := r.startRestore(ctx, s)
		return false, &out
	case restoreRefuse:
		return false, &outcome{reason: reasonRestoreRefused, message: fmt.Sprintf(
			"stream %q exists on the server, and a restore never overwrites a stream: delete it there, or remove spec.restore to manage it as it is", s.Spec.Name)}
	case restoreAdopt:
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, reasonRestored, "Restore", "stream %s restored: %d messages, sequences %d to %d",
			s.Spec.Name, result.Restored.Messages, result.Restored.FirstSeq, result.Restored.LastSeq)
		return true, nil
	}
	return false, nil
}

// foreignJob is why job, of s's restore Job's name, says nothing of s's
// restore: someone else's Job (another Stream's of that name, a user's),
// whose pods' reports are not this restore's outcome. Nil when s controls
// it.
func foreignJob(job *batchv1.Job, s *v1alpha1.Stream) *outcome {
	if metav1.IsControlledBy(job, s) {
		return nil
	}
	return &outcome{reason: reasonRestoreRefused, message: fmt.Sprintf(
		"Job %s exists and is not this Stream's: rename or remove it", job.Name)}
}

// startRestore makes s's restore Job, in s's namespace, from the backup s
// names, on the NatsCluster s names: the target's pass has let s in to it
// already (its namespace admitted, its account on it).
func (r *Reconciler[T, C]) startRestore(ctx context.Context, s *v1alpha1.Stream) outcome {
	from, problem := r.restoreSource(ctx, s)
	if problem != nil {
		return *problem
	}
	key := client.ObjectKey{Namespace: cmp.Or(s.Spec.Cluster.Namespace, s.Namespace), Name: s.Spec.Cluster.Name}
	var c v1alpha1.NatsCluster
	if err := r.Get(ctx, key, &c); err != nil {
		return outcome{reason: reasonClusterNotFound, message: fmt.Sprintf("NatsCluster %s: %v", key, err), retry: true}
	}
	var user *v1alpha1.NatsUser
	if name := s.Spec.Restore.User; name != "" {
		u, refusal, err := jobs.User(ctx, r.Client, s.Namespace, name, c.Namespace, c.Name, s.Spec.Account)
		switch {
		case err != nil:
			return outcome{reason: reasonRestoreNotReady, message: err.Error(), retry: true}
		case refusal != "":
			return outcome{reason: reasonRestoreNotReady, message: refusal, retry: true}
		}
		user = u
	}
	job, err := render.RestoreJob(s, &c, from, user, r.Image)
	if err != nil {
		return outcome{reason: reasonRestoreRefused, message: err.Error()}
	}
	if err := r.Applier.Apply(ctx, s, job); err != nil {
		return outcome{reason: reasonRestoreNotReady, message: err.Error(), retry: true}
	}
	return outcome{reason: reasonRestoring, message: "Job " + job.Name + " restores the stream from " + from.Path, retry: true}
}

// restoreSource is where the backup s names is, or why it cannot be
// restored (yet). The keys to an object store must be in an opted-in
// Secret: a tenant names a store, never another's credentials.
func (r *Reconciler[T, C]) restoreSource(ctx context.Context, s *v1alpha1.Stream) (render.BackupSource, *outcome) {
	from := s.Spec.Restore
	switch {
	case from.VolumeClaim != nil:
		return render.BackupSource{Claim: from.VolumeClaim.ClaimName, Path: from.Path}, nil
	case from.S3 != nil:
		return render.BackupSource{S3: from.S3, Path: from.Path}, r.storeSecretsRefused(ctx, s.Namespace, from.S3, "spec.restore.s3")
	}
	var b v1alpha1.Backup
	err := r.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: from.Backup}, &b)
	switch {
	case apierrors.IsNotFound(err):
		return render.BackupSource{}, &outcome{reason: reasonBackupNotReady, message: fmt.Sprintf("Backup %s does not exist in this namespace", from.Backup), retry: true}
	case err != nil:
		return render.BackupSource{}, &outcome{reason: reasonBackupNotReady, message: err.Error(), retry: true}
	case b.Status.Phase == v1alpha1.BackupFailed:
		return render.BackupSource{}, &outcome{reason: reasonBackupNotReady, message: fmt.Sprintf("Backup %s failed: there is nothing to restore", b.Name)}
	case !meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionReady) || b.Status.Path == "":
		return render.BackupSource{}, &outcome{reason: reasonBackupNotReady, message: fmt.Sprintf("Backup %s is not taken yet", b.Name), retry: true}
	case b.Spec.Stream != "" && b.Status.Stream != s.Spec.Name:
		return render.BackupSource{}, &outcome{reason: reasonRestoreRefused, message: fmt.Sprintf(
			"Backup %s holds stream %q, not %q: a restore makes the stream it backed up", b.Name, b.Status.Stream, s.Spec.Name)}
	}
	src := backupSourceOf(&b, s.Spec.Name)
	if b.Spec.S3 != nil {
		return src, r.storeSecretsRefused(ctx, s.Namespace, b.Spec.S3, "the Backup's spec.s3")
	}
	return src, nil
}

// backupSourceOf is where the backup of stream lives in Backup b: b's
// place, or, for a backup of every stream, the place named by the stream
// inside it (the Job refuses a set without it: NotABackup).
func backupSourceOf(b *v1alpha1.Backup, stream string) render.BackupSource {
	src := render.BackupSource{Path: b.Status.Path}
	if b.Spec.S3 != nil {
		src = render.BackupSource{S3: b.Spec.S3, Path: b.Spec.S3.Key(b.Name)}
	} else if b.Spec.VolumeClaim != nil {
		src.Claim = b.Spec.VolumeClaim.ClaimName
	}
	if b.Spec.Stream == "" {
		src.Path += "/" + stream
	}
	return src
}

// storeSecretsRefused is why the Secrets of store cannot be mounted, or
// nil when they can.
func (r *Reconciler[T, C]) storeSecretsRefused(ctx context.Context, ns string, store *v1alpha1.S3Bucket, field string) *outcome {
	refusal, err := usersecrets.Refused(ctx, r.UserSecrets, ns, store.CredentialsSecret, field+".credentialsSecret", store.CASecret, field+".caSecret")
	if err != nil {
		return &outcome{reason: reasonRestoreNotReady, message: err.Error(), retry: true}
	}
	if refusal != "" {
		return &outcome{reason: reasonSecretNotFound, message: refusal}
	}
	return nil
}
