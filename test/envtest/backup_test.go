package envtest_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestBackupsWaitAndPauseWithoutAJob: a Backup of a cluster that is not
// there waits with the reason (no Job); a paused Backup says so and
// starts no Job over a window; a ScheduledBackup whose schedule does not
// parse is stalled with the parser's word; one that is due makes one
// Backup and no second while the first has not ended. Careless variants
// watched failing: the pause not read (the paused Backup's status said
// ClusterNotFound), and the schedule without its guard on a running
// Backup (a Backup every second).
func TestBackupsWaitAndPauseWithoutAJob(t *testing.T) {
	ns := namespace(t)
	backup := func(name string, paused bool) *v1alpha1.Backup {
		b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.BackupSpec{Cluster: "absent", Stream: "ORDERS", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: "backups"}}}
		if paused {
			b.Annotations = map[string]string{v1alpha1.AnnotationPauseReconciliation: "true"}
		}
		create(t, b)
		return b
	}
	readyReason := func(obj client.Object, conds func() []metav1.Condition) (string, error) {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return "", err
		}
		c := meta.FindStatusCondition(conds(), v1alpha1.ConditionReady)
		if c == nil {
			return "", fmt.Errorf("%s has no Ready condition yet", obj.GetName())
		}
		return c.Reason, nil
	}
	waiting, paused := backup("waits", false), backup("paused", true)
	for b, want := range map[*v1alpha1.Backup]string{waiting: "ClusterNotFound", paused: v1alpha1.ReasonReconciliationPaused} {
		eventually(t, wait, func() error {
			reason, err := readyReason(b, func() []metav1.Condition { return b.Status.Conditions })
			if err != nil || reason != want || b.Status.Phase != v1alpha1.BackupPending {
				return fmt.Errorf("Backup %s: phase %s, reason %q (%v); want Pending, %s", b.Name, b.Status.Phase, reason, err, want)
			}
			return nil
		})
	}

	bad := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: v1alpha1.ScheduledBackupSpec{
		Schedule: "every night", Backup: waiting.Spec, Keep: v1alpha1.BackupRetention{Count: 3}}}
	due := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "due"}, Spec: v1alpha1.ScheduledBackupSpec{
		Schedule: "@every 1s", Backup: waiting.Spec, Keep: v1alpha1.BackupRetention{Count: 3}}}
	create(t, bad)
	create(t, due)
	eventually(t, wait, func() error {
		reason, err := readyReason(bad, func() []metav1.Condition { return bad.Status.Conditions })
		if err != nil || reason != "InvalidSchedule" || !meta.IsStatusConditionTrue(bad.Status.Conditions, v1alpha1.ConditionStalled) {
			return fmt.Errorf("ScheduledBackup bad: reason %q (%v), want InvalidSchedule and Stalled", reason, err)
		}
		return nil
	})
	scheduled := func() ([]v1alpha1.Backup, error) {
		var list v1alpha1.BackupList
		err := k8s.List(ctx(t), &list, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelScheduledBackup: due.Name})
		return list.Items, err
	}
	eventually(t, wait, func() error {
		if items, err := scheduled(); err != nil || len(items) == 0 {
			return fmt.Errorf("the due schedule made no Backup (%v)", err)
		}
		return nil
	})
	// Held over a window of several due times: the first Backup waits for
	// its cluster, so no second is made beside it; nothing starts a Job.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		items, err := scheduled()
		if err != nil || len(items) != 1 {
			t.Fatalf("%d Backups of the schedule (%v), want the one that waits", len(items), err)
		}
		var jobs batchv1.JobList
		if err := k8s.List(ctx(t), &jobs, client.InNamespace(ns)); err != nil || len(jobs.Items) != 0 {
			t.Fatalf("%d Jobs (%v), want none: no cluster, and one Backup paused", len(jobs.Items), err)
		}
	}
}
