package schedulecontroller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestVerdict: a schedule is Ready unless its newest Backup failed, and
// its last success is the newest Succeeded backup's end, not the newest
// Backup's. Careless variants watched failing: failed when any Backup
// failed (an old failure kept a schedule that has since succeeded
// unready), and the last success taken from the newest made Backup (a
// running one hid the success before it).
func TestVerdict(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(time.Date(2026, 12, 7, 3, m, 0, 0, time.UTC)) }
	backup := func(made int, phase v1alpha1.BackupPhase, done int) v1alpha1.Backup {
		b := v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b" + at(made).Format("1504"), CreationTimestamp: at(made)}}
		b.Status.Phase = phase
		if done > 0 {
			end := at(done)
			b.Status.CompletedAt = &end
		}
		return b
	}
	for _, tc := range []struct {
		name        string
		backups     []v1alpha1.Backup
		ready       bool
		lastSuccess int // minute; 0: none
	}{
		{"none yet", nil, true, 0},
		{"one good", []v1alpha1.Backup{backup(1, v1alpha1.BackupSucceeded, 2)}, true, 2},
		{"newest failed", []v1alpha1.Backup{backup(1, v1alpha1.BackupSucceeded, 2), backup(10, v1alpha1.BackupFailed, 0)}, false, 2},
		{"a failure, then a success", []v1alpha1.Backup{backup(1, v1alpha1.BackupFailed, 0), backup(10, v1alpha1.BackupSucceeded, 12)}, true, 12},
		{"a success, then one running", []v1alpha1.Backup{backup(10, v1alpha1.BackupRunning, 0), backup(1, v1alpha1.BackupSucceeded, 3)}, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict(tc.backups)
			if v.pass.Ready != tc.ready || v.failed == tc.ready {
				t.Errorf("ready %v, failed %v (%s); want ready %v", v.pass.Ready, v.failed, v.pass.Message, tc.ready)
			}
			switch {
			case tc.lastSuccess == 0 && v.lastSuccess != nil:
				t.Errorf("last success %v, want none", v.lastSuccess)
			case tc.lastSuccess != 0 && (v.lastSuccess == nil || !v.lastSuccess.Equal(&metav1.Time{Time: at(tc.lastSuccess).Time})):
				t.Errorf("last success %v, want minute %d", v.lastSuccess, tc.lastSuccess)
			}
		})
	}
}
