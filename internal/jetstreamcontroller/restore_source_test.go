package jetstreamcontroller

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestBackupSourceOf: a restore reads a Backup's own place, or, in a
// backup of every stream, the stream's place inside it; on a claim from
// the path the Job reported, in a store from the Backup's key. Careless
// variant watched failing: a set's own place (the Job would find no
// backup there).
func TestBackupSourceOf(t *testing.T) {
	store := &v1alpha1.S3Bucket{Bucket: "nats", Prefix: "prod"}
	backup := func(stream string, s3 bool) *v1alpha1.Backup {
		b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "nightly"}, Spec: v1alpha1.BackupSpec{Stream: stream}}
		if s3 {
			b.Spec.S3 = store
		} else {
			b.Spec.VolumeClaim = &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}
			b.Status.Path = b.BackupPath()
		}
		return b
	}
	for _, tc := range []struct {
		name        string
		b           *v1alpha1.Backup
		claim, path string
	}{
		{"one stream on a claim", backup("ORDERS", false), "backups", "backups/nightly"},
		{"every stream on a claim", backup("", false), "backups", "backups/nightly/ORDERS"},
		{"one stream in a store", backup("ORDERS", true), "", "prod/nightly"},
		{"every stream in a store", backup("", true), "", "prod/nightly/ORDERS"},
	} {
		got := backupSourceOf(tc.b, "ORDERS")
		if got.Claim != tc.claim || got.Path != tc.path || (got.S3 != nil) != (tc.b.Spec.S3 != nil) {
			t.Errorf("%s: %+v, want claim %q, path %q", tc.name, got, tc.claim, tc.path)
		}
	}
}

// TestForeignRestoreJobIsRefused: a Job of the restore's name that the
// Stream does not control (another Stream's of the same name after a
// delete and re-create, a user's) is refused, not read as the restore's
// outcome; the Stream's own is read. Careless variant watched failing:
// the Job taken by its name alone (the other Stream's Job was read).
func TestForeignRestoreJobIsRefused(t *testing.T) {
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", UID: "now"}}
	owned := func(uid types.UID) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "restore-orders", Namespace: "shop"}}
		if uid != "" {
			earlier := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", UID: uid}}
			j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(earlier, v1alpha1.GroupVersion.WithKind("Stream"))}
		}
		return j
	}
	if got := foreignJob(owned("now"), s); got != nil {
		t.Errorf("the Stream's own Job refused: %+v", got)
	}
	for name, job := range map[string]*batchv1.Job{"an earlier Stream's": owned("before"), "a user's": owned("")} {
		if got := foreignJob(job, s); got == nil || got.reason != reasonRestoreRefused {
			t.Errorf("%s Job: %+v, want RestoreRefused", name, got)
		}
	}
}
