package schedulecontroller

import (
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// taken is one Backup of a schedule as the decision needs it.
type taken struct {
	name     string
	phase    v1alpha1.BackupPhase
	made     time.Time // when the schedule made it
	finished time.Time // when its snapshot finished; zero until Succeeded
}

// observation is what a pass found.
type observation struct {
	now      time.Time
	schedule cron.Schedule
	suspend  bool
	// since is when the schedule last made a Backup, or was made itself.
	since   time.Time
	backups []taken
	keep    retention
}

type retention struct {
	count int
	age   time.Duration
}

// step is what the pass does: make one Backup (named make, for the time
// due), delete the Backups in expire (data and all), and look again at
// next. wait says why a due Backup is not made yet.
type step struct {
	make   string
	due    time.Time
	expire []string
	next   time.Time
	wait   string
}

// decide is the schedule's next step. A Backup is made for the latest
// time due, once, however many were missed while the operator was away;
// never while the schedule's previous Backup still runs (two snapshots of
// one stream at once would only compete). Retention counts Succeeded
// Backups, newest first: the newest always stays; one past the count, or
// finished longer ago than the age, goes. A Failed Backup holds no data
// and goes once a newer one succeeded.
func decide(o observation, schedName string) step {
	var s step
	due := time.Time{}
	for t := o.schedule.Next(o.since); !t.After(o.now); t = o.schedule.Next(t) {
		due = t
	}
	running := slices.ContainsFunc(o.backups, func(b taken) bool {
		return b.phase != v1alpha1.BackupSucceeded && b.phase != v1alpha1.BackupFailed
	})
	switch {
	case due.IsZero() || o.suspend:
	case running:
		s.wait = "the schedule's previous Backup still runs"
	default:
		s.make, s.due = fmt.Sprintf("%s-%d", schedName, due.Unix()), due
	}
	s.next = o.schedule.Next(o.now)
	if !due.IsZero() && s.make == "" && !o.suspend {
		s.next = o.now.Add(time.Minute) // due, waiting: look again soon
	}
	s.expire = expired(o)
	return s
}

// expired are the Backups retention lets go.
func expired(o observation) []string {
	var ok []taken
	for _, b := range o.backups {
		if b.phase == v1alpha1.BackupSucceeded {
			ok = append(ok, b)
		}
	}
	slices.SortFunc(ok, func(a, b taken) int { return b.finished.Compare(a.finished) })
	var out []string
	for i, b := range ok {
		tooMany := o.keep.count > 0 && i >= o.keep.count
		tooOld := o.keep.age > 0 && o.now.Sub(b.finished) > o.keep.age
		if i > 0 && (tooMany || tooOld) {
			out = append(out, b.name)
		}
	}
	if len(ok) > 0 {
		for _, b := range o.backups {
			if b.phase == v1alpha1.BackupFailed && b.made.Before(ok[0].made) {
				out = append(out, b.name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// outcome is what a schedule's Backups say of it.
type outcome struct {
	pass status.Pass
	// lastSuccess is when the newest Succeeded backup finished.
	lastSuccess *metav1.Time
	// failed: the newest Backup failed (a later success clears it).
	failed bool
}

// verdict reads a schedule's Backups: Ready unless the newest one failed,
// and when the newest good one finished.
func verdict(backups []v1alpha1.Backup) outcome {
	var newest, newestOK *v1alpha1.Backup
	for i := range backups {
		b := &backups[i]
		if newest == nil || newest.CreationTimestamp.Before(&b.CreationTimestamp) {
			newest = b
		}
		if b.Status.Phase == v1alpha1.BackupSucceeded && b.Status.CompletedAt != nil &&
			(newestOK == nil || newestOK.Status.CompletedAt.Before(b.Status.CompletedAt)) {
			newestOK = b
		}
	}
	var out outcome
	if newestOK != nil {
		out.lastSuccess = newestOK.Status.CompletedAt
	}
	out.failed = newest != nil && newest.Status.Phase == v1alpha1.BackupFailed
	if out.failed {
		out.pass = status.Pass{Reason: reasonLastBackupFailed, Message: fmt.Sprintf("Backup %s failed: kubectl describe backup %s says why; the next is taken as scheduled", newest.Name, newest.Name)}
		return out
	}
	out.pass = status.Pass{Ready: true, Reason: reasonScheduled, Message: "backups are taken as scheduled"}
	return out
}
