package jetstreamcontroller

import (
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestDecideRestore: a restore makes a stream only where the server has
// none, never writes while its Job runs, and never takes a stream it did
// not make. Careless variants watched failing: starting a restore
// whatever the server has (the "someone else's stream" case overwritten),
// and syncing while the Job runs (a half-restored stream updated).
func TestDecideRestore(t *testing.T) {
	const none v1alpha1.BackupPhase = ""
	for _, tc := range []struct {
		name           string
		wanted         bool
		job            v1alpha1.BackupPhase
		onServer, mine bool
		want           restoreAction
	}{
		{"no restore asked", false, none, false, false, restoreNone},
		{"no restore asked, a stream there", false, none, true, false, restoreNone},
		{"nothing there yet", true, none, false, false, restoreStart},
		{"someone else's stream", true, none, true, false, restoreRefuse},
		{"its own stream, restore asked later", true, none, true, true, restoreNone},
		{"the Job's pod waits", true, v1alpha1.BackupPending, false, false, restoreWait},
		{"the Job runs, the stream half made", true, v1alpha1.BackupRunning, true, false, restoreWait},
		{"the Job failed", true, v1alpha1.BackupFailed, false, false, restoreFailed},
		{"the Job made it", true, v1alpha1.BackupSucceeded, true, false, restoreAdopt},
		{"made and brought to the spec", true, v1alpha1.BackupSucceeded, true, true, restoreNone},
		{"made, then deleted by someone", true, v1alpha1.BackupSucceeded, false, false, restoreNone},
	} {
		if got := decideRestore(tc.wanted, tc.job, tc.onServer, tc.mine); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
