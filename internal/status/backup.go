package status

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/backupreport"
)

// Reasons of a Backup's Ready condition beside the report's own
// (backupreport.Reason*).
const (
	ReasonBackupPending    = "Pending"
	ReasonBackupRunning    = "Running"
	ReasonBackupTaken      = "BackupTaken"
	ReasonReportUnreadable = "ReportUnreadable"
)

// BackupResult is where a Backup stands, read from its Job and the Job's
// pods: its phase, its Ready pass and, once taken, what the backup holds.
type BackupResult struct {
	Phase    v1alpha1.BackupPhase
	Pass     Pass
	Manifest *backupreport.Manifest
	// Set is what a backup of every stream holds, in sum.
	Set *backupreport.SetManifest
	// Progress is how far a running backup has come (its pod says).
	Progress *v1alpha1.TransferProgress
}

// Terminal: the backup is taken or will not be; its status is final.
func (r BackupResult) Terminal() bool {
	return r.Phase == v1alpha1.BackupSucceeded || r.Phase == v1alpha1.BackupFailed
}

// BackupJob reads a backup Job's outcome. The Job's own conditions say
// whether it is over; the report in the pod's termination message says
// what came of it. A Job complete without a readable report is a failure,
// never a backup: status lists only what the data path vouched for.
func BackupJob(job *batchv1.Job, pods []corev1.Pod) BackupResult {
	r, done := dataPathJob(job, pods)
	if !done {
		return r.BackupResult
	}
	if set := r.report.Set; set != nil {
		return BackupResult{Phase: v1alpha1.BackupSucceeded, Set: set, Pass: Pass{Ready: true, Reason: ReasonBackupTaken,
			Message: fmt.Sprintf("%d streams, %d messages, taken", set.Streams, set.Messages)}}
	}
	if r.report.Manifest == nil {
		return backupFailed(ReasonReportUnreadable, "the backup Job completed and reported no backup")
	}
	m := r.report.Manifest
	return BackupResult{Phase: v1alpha1.BackupSucceeded, Manifest: m, Pass: Pass{Ready: true, Reason: ReasonBackupTaken,
		Message: fmt.Sprintf("stream %s, sequences %d to %d, taken", m.Stream, m.FirstSeq, m.LastSeq)}}
}

// RestoreResult is where a restore Job stands: its phase, the pass it
// gives its Stream while not succeeded, and once succeeded what it made.
type RestoreResult struct {
	Phase    v1alpha1.BackupPhase
	Pass     Pass
	Restored *backupreport.Restored
}

// RestoreJob reads a restore Job's outcome, as BackupJob a backup's.
func RestoreJob(job *batchv1.Job, pods []corev1.Pod) RestoreResult {
	r, done := dataPathJob(job, pods)
	switch {
	case !done:
		return RestoreResult{Phase: r.Phase, Pass: r.Pass}
	case r.report.Restored == nil:
		f := backupFailed(ReasonReportUnreadable, "the restore Job completed and reported no stream")
		return RestoreResult{Phase: f.Phase, Pass: f.Pass}
	}
	return RestoreResult{Phase: v1alpha1.BackupSucceeded, Restored: r.report.Restored}
}

// RemoveJob reads a retention's removal Job: done once it reported the
// directory removed; while not done, its phase and pass.
func RemoveJob(job *batchv1.Job, pods []corev1.Pod) (done bool, r BackupResult) {
	read, done := dataPathJob(job, pods)
	switch {
	case !done:
		return false, read.BackupResult
	case read.report.Removed == "":
		return false, backupFailed(ReasonReportUnreadable, "the removal Job completed and reported nothing removed")
	}
	return true, BackupResult{}
}

// jobRead is a kubenats-backup Job as read so far: while not done, the
// result to report; once done (complete with a decoded report), the
// report.
type jobRead struct {
	BackupResult
	report backupreport.Report
}

func dataPathJob(job *batchv1.Job, pods []corev1.Pod) (jobRead, bool) {
	switch {
	case jobCondition(job, batchv1.JobComplete):
		p := newestPod(pods, corev1.PodSucceeded)
		if p == nil {
			return jobRead{BackupResult: backupFailed(ReasonReportUnreadable, "the Job completed, and its pod is gone with its report")}, false
		}
		r, err := backupreport.Decode(terminationMessage(p))
		switch {
		case err != nil:
			return jobRead{BackupResult: backupFailed(ReasonReportUnreadable, fmt.Sprintf("pod %s: %v", p.Name, err))}, false
		case r.Reason != "":
			return jobRead{BackupResult: backupFailed(r.Reason, r.Message)}, false
		}
		return jobRead{report: r}, true
	case jobCondition(job, batchv1.JobFailed):
		return jobRead{BackupResult: backupFailed(lastFailure(job, pods))}, false
	}
	tries := fmt.Sprintf("try %d of %d", job.Status.Failed+1, backoffLimit(job)+1)
	if job.Status.Active > 0 && job.Status.Ready != nil && *job.Status.Ready > 0 {
		return jobRead{BackupResult: BackupResult{Phase: v1alpha1.BackupRunning, Pass: Pass{Reason: ReasonBackupRunning, Message: "Job " + job.Name + " runs, " + tries}}}, false
	}
	msg := "Job " + job.Name + "'s pod is not running yet, " + tries
	if p := newestPod(pods, corev1.PodPending); p != nil {
		if w := waitingReason(p); w != "" {
			msg += ": " + w
		}
	}
	return jobRead{BackupResult: BackupResult{Phase: v1alpha1.BackupPending, Pass: Pass{Reason: ReasonBackupPending, Message: msg}}}, false
}

func backupFailed(reason, message string) BackupResult {
	return BackupResult{Phase: v1alpha1.BackupFailed, Pass: Pass{Stalled: true, Reason: reason, Message: BoundMessage(message)}}
}

// lastFailure is why the last try failed: its report, or the pod's end
// (OOMKilled, a deadline) when it wrote none.
func lastFailure(job *batchv1.Job, pods []corev1.Pod) (reason, message string) {
	p := newestPod(pods, corev1.PodFailed)
	if p == nil {
		return backupreport.ReasonFailed, "the backup Job failed: " + jobConditionMessage(job, batchv1.JobFailed)
	}
	if r, err := backupreport.Decode(terminationMessage(p)); err == nil && r.Manifest == nil {
		return r.Reason, r.Message
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return backupreport.ReasonFailed, fmt.Sprintf("pod %s: container %s ended %s (exit code %d)", p.Name, cs.Name, t.Reason, t.ExitCode)
		}
	}
	return backupreport.ReasonFailed, fmt.Sprintf("pod %s failed: %s", p.Name, p.Status.Reason)
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobConditionMessage(job *batchv1.Job, t batchv1.JobConditionType) string {
	for _, c := range job.Status.Conditions {
		if c.Type == t {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

func backoffLimit(job *batchv1.Job) int32 {
	if job.Spec.BackoffLimit == nil {
		return 6 // the API's default
	}
	return *job.Spec.BackoffLimit
}

// newestPod is the most recently made pod in phase.
func newestPod(pods []corev1.Pod, phase corev1.PodPhase) *corev1.Pod {
	var newest *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == phase && (newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp)) {
			newest = p
		}
	}
	return newest
}

// terminationMessage is what the pod's first container said as it ended.
func terminationMessage(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return t.Message
		}
	}
	return ""
}

func waitingReason(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			return w.Reason
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}
