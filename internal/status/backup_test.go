package status

import (
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/backupreport"
)

func backupPod(name string, phase corev1.PodPhase, age time.Duration, term *corev1.ContainerStateTerminated) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age))},
		Status: corev1.PodStatus{Phase: phase}}
	if term != nil {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "backup", State: corev1.ContainerState{Terminated: term}}}
	}
	return p
}

func reportOf(t *testing.T, r backupreport.Report) string {
	b, err := backupreport.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jobWith(failed int32, active int32, ready int32, conds ...batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2)},
		Status: batchv1.JobStatus{Failed: failed, Active: active, Ready: ptr.To(ready)}}
	for _, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"})
	}
	return j
}

// TestBackupJobReadsTheReportNotTheExitCode: a Backup is Succeeded only
// with a manifest its pod vouched for, and a failure carries the report's
// reason. Careless variants watched failing: Succeeded from the Job's
// Complete condition alone (the case "complete, unreadable report"), and
// the oldest failed pod's report taken for the last try's.
func TestBackupJobReadsTheReportNotTheExitCode(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	m := &backupreport.Manifest{Stream: "ORDERS", FirstSeq: 1, LastSeq: 42, Messages: 42, DataFile: "stream.arc.s2",
		SHA256: strings.Repeat("0f", 32), Started: t0, Finished: t0.Add(time.Second)}
	taken := reportOf(t, backupreport.Report{Manifest: m})
	refused := reportOf(t, backupreport.Failure(backupreport.ReasonServerRefused, errors.New("stream not found")))
	full := reportOf(t, backupreport.Failure(backupreport.ReasonOutOfSpace, errors.New("no space left on device")))
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		pods   []corev1.Pod
		phase  v1alpha1.BackupPhase
		reason string
	}{
		{"pod pending", jobWith(0, 1, 0), []corev1.Pod{backupPod("a", corev1.PodPending, 0, nil)}, v1alpha1.BackupPending, ReasonBackupPending},
		{"running", jobWith(0, 1, 1), []corev1.Pod{backupPod("a", corev1.PodRunning, 0, nil)}, v1alpha1.BackupRunning, ReasonBackupRunning},
		{"taken", jobWith(0, 0, 0, batchv1.JobComplete), []corev1.Pod{
			backupPod("a", corev1.PodSucceeded, 0, &corev1.ContainerStateTerminated{Message: taken})}, v1alpha1.BackupSucceeded, ReasonBackupTaken},
		{"complete, unreadable report", jobWith(0, 0, 0, batchv1.JobComplete), []corev1.Pod{
			backupPod("a", corev1.PodSucceeded, 0, &corev1.ContainerStateTerminated{Message: "done"})}, v1alpha1.BackupFailed, ReasonReportUnreadable},
		{"complete, pod gone", jobWith(0, 0, 0, batchv1.JobComplete), nil, v1alpha1.BackupFailed, ReasonReportUnreadable},
		{"retrying after a refusal", jobWith(1, 1, 0), []corev1.Pod{
			backupPod("a", corev1.PodFailed, time.Minute, &corev1.ContainerStateTerminated{ExitCode: 1, Message: refused}),
			backupPod("b", corev1.PodPending, 0, nil)}, v1alpha1.BackupPending, ReasonBackupPending},
		{"failed, the last try's reason", jobWith(3, 0, 0, batchv1.JobFailed), []corev1.Pod{
			backupPod("a", corev1.PodFailed, 2*time.Minute, &corev1.ContainerStateTerminated{ExitCode: 1, Message: refused}),
			backupPod("c", corev1.PodFailed, 0, &corev1.ContainerStateTerminated{ExitCode: 1, Message: full}),
			backupPod("b", corev1.PodFailed, time.Minute, &corev1.ContainerStateTerminated{ExitCode: 1, Message: refused})},
			v1alpha1.BackupFailed, backupreport.ReasonOutOfSpace},
		{"failed without a report", jobWith(3, 0, 0, batchv1.JobFailed), []corev1.Pod{
			backupPod("a", corev1.PodFailed, 0, &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"})},
			v1alpha1.BackupFailed, backupreport.ReasonFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BackupJob(tc.job, tc.pods)
			if got.Phase != tc.phase || got.Pass.Reason != tc.reason {
				t.Fatalf("phase %s, reason %s (%s); want %s, %s", got.Phase, got.Pass.Reason, got.Pass.Message, tc.phase, tc.reason)
			}
			if (got.Manifest != nil) != (tc.phase == v1alpha1.BackupSucceeded) || got.Pass.Ready != (tc.phase == v1alpha1.BackupSucceeded) {
				t.Fatalf("manifest %v, ready %v in phase %s", got.Manifest, got.Pass.Ready, got.Phase)
			}
			if tc.phase == v1alpha1.BackupFailed && (!got.Pass.Stalled || got.Pass.Message == "") {
				t.Fatalf("a failure must be stalled and say why: %+v", got.Pass)
			}
			if tc.name == "failed without a report" && !strings.Contains(got.Pass.Message, "OOMKilled") {
				t.Fatalf("the pod's end is not named: %s", got.Pass.Message)
			}
		})
	}
}

// TestRestoreJobWantsARestoreReport: a restore Job is Succeeded only with
// the report of a restored stream; a backup's manifest, or a refusal,
// is not one. Careless variant watched failing: any decoded report taken
// for success (the manifest case).
func TestRestoreJobWantsARestoreReport(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	restored := reportOf(t, backupreport.Report{Restored: &backupreport.Restored{Stream: "ORDERS", Messages: 3, FirstSeq: 1, LastSeq: 3}})
	manifest := reportOf(t, backupreport.Report{Manifest: &backupreport.Manifest{Stream: "ORDERS", DataFile: "stream.arc.s2",
		SHA256: strings.Repeat("0f", 32), Started: t0, Finished: t0}})
	exists := reportOf(t, backupreport.Failure(backupreport.ReasonStreamExists, errors.New("restore: the stream exists already")))
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		msg    string
		phase  v1alpha1.BackupPhase
		reason string
	}{
		{"restored", jobWith(0, 0, 0, batchv1.JobComplete), restored, v1alpha1.BackupSucceeded, ""},
		{"a backup's report", jobWith(0, 0, 0, batchv1.JobComplete), manifest, v1alpha1.BackupFailed, ReasonReportUnreadable},
		{"refused", jobWith(3, 0, 0, batchv1.JobFailed), exists, v1alpha1.BackupFailed, backupreport.ReasonStreamExists},
	} {
		phase := corev1.PodSucceeded
		if tc.phase == v1alpha1.BackupFailed && tc.reason != ReasonReportUnreadable {
			phase = corev1.PodFailed
		}
		got := RestoreJob(tc.job, []corev1.Pod{backupPod("a", phase, 0, &corev1.ContainerStateTerminated{Message: tc.msg})})
		if got.Phase != tc.phase || got.Pass.Reason != tc.reason || (got.Restored != nil) != (tc.phase == v1alpha1.BackupSucceeded) {
			t.Errorf("%s: %+v, want phase %s reason %q", tc.name, got, tc.phase, tc.reason)
		}
	}
}

// TestBackupJobReadsASetsReport: a backup of every stream reports its
// sums, and they reach the result as a set, not as one stream's
// manifest. Careless variant watched failing: the set's report not read
// (a completed set was ReportUnreadable).
func TestBackupJobReadsASetsReport(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	set := &backupreport.SetManifest{Streams: 3, Messages: 100, DataSize: 4096, Started: t0, Finished: t0.Add(time.Second)}
	got := BackupJob(jobWith(0, 0, 0, batchv1.JobComplete), []corev1.Pod{
		backupPod("a", corev1.PodSucceeded, 0, &corev1.ContainerStateTerminated{Message: reportOf(t, backupreport.Report{Set: set})})})
	if got.Phase != v1alpha1.BackupSucceeded || got.Set == nil || got.Set.Streams != 3 || got.Manifest != nil || !got.Pass.Ready {
		t.Fatalf("%+v", got)
	}
}
