// Package schedulecontroller runs ScheduledBackups: a Backup made when
// one is due, and the schedule's old Backups deleted, data and all, as
// its retention says. Taking each backup is the Backup controller's.
package schedulecontroller

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/metrics"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/status"
)

// +kubebuilder:rbac:groups=kubenats.io,resources=scheduledbackups,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubenats.io,resources=scheduledbackups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kubenats.io,resources=backups,verbs=get;list;watch;create;delete;patch

// Reasons of a ScheduledBackup's Ready condition.
const (
	reasonScheduled        = "Scheduled"
	reasonInvalidSchedule  = "InvalidSchedule"
	reasonLastBackupFailed = "LastBackupFailed"
)

// Reconciler runs ScheduledBackups.
type Reconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// OperatorPaused (--pause-reconciliation) makes and deletes no
	// Backup, as the schedule's own pause annotation does.
	OperatorPaused bool
}

// Reconcile is one pass: read the schedule's Backups, make the one due,
// delete the expired ones, and write what happened.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var sb v1alpha1.ScheduledBackup
	if err := r.Get(ctx, req.NamespacedName, &sb); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetSchedule(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	schedule, err := cron.ParseStandard(sb.Spec.Schedule)
	if err != nil {
		return ctrl.Result{}, r.write(ctx, &sb, status.Pass{Stalled: true, Reason: reasonInvalidSchedule,
			Message: fmt.Sprintf("spec.schedule %q: %v", sb.Spec.Schedule, err)}, nil)
	}
	var age time.Duration
	if sb.Spec.Keep.Age != "" {
		if age, err = time.ParseDuration(string(sb.Spec.Keep.Age)); err != nil {
			return ctrl.Result{}, r.write(ctx, &sb, status.Pass{Stalled: true, Reason: reasonInvalidSchedule,
				Message: fmt.Sprintf("spec.keep.age: %v", err)}, nil)
		}
	}
	var list v1alpha1.BackupList
	if err := r.List(ctx, &list, client.InNamespace(sb.Namespace), client.MatchingLabels{v1alpha1.LabelScheduledBackup: sb.Name}); err != nil {
		return ctrl.Result{}, err
	}
	o := observation{now: now, schedule: schedule, suspend: sb.Spec.Suspend, since: sb.CreationTimestamp.Time,
		keep: retention{count: int(sb.Spec.Keep.Count), age: age}}
	if sb.Status.LastScheduleTime != nil {
		o.since = sb.Status.LastScheduleTime.Time
	}
	for _, b := range list.Items {
		if b.DeletionTimestamp.IsZero() {
			o.backups = append(o.backups, fact(&b))
		}
	}
	s := decide(o, sb.Name)
	if p := pause.Of(&sb, r.OperatorPaused); p.Paused {
		if err := r.write(ctx, &sb, status.Pass{Reason: p.Reason, Message: p.Message}, nil); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil // the resume wakes it
	}
	for _, name := range s.expire {
		// Marked first: the data finalizer deletes the data of a Backup
		// retention deletes, and of no other.
		b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: sb.Namespace, Name: name}}
		mark := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationExpired+`":`+strconv.Quote(sb.Name)+`}}}`))
		if err := r.Patch(ctx, b, mark); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		if err := r.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(&sb, nil, corev1.EventTypeNormal, "BackupExpired", "Retention", "Backup %s deleted with its data (spec.keep)", name)
	}
	if s.make != "" {
		if err := r.Create(ctx, backupFor(&sb, s.make)); client.IgnoreAlreadyExists(err) != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(&sb, nil, corev1.EventTypeNormal, "BackupMade", "Schedule", "Backup %s made for %s", s.make, s.due.UTC().Format(time.RFC3339))
		sb.Status.LastScheduleTime, sb.Status.LastBackup = &metav1.Time{Time: s.due}, s.make
	}
	pass := lastOutcome(&sb, list.Items)
	if s.wait != "" {
		pass.Message += "; a Backup is due and waits: " + s.wait
	}
	next := metav1.NewTime(s.next)
	if err := r.write(ctx, &sb, pass, &next); err != nil {
		return ctrl.Result{}, err // never a delay beside an error
	}
	return ctrl.Result{RequeueAfter: max(s.next.Sub(now), time.Second)}, nil
}

// fact is what decide needs of b.
func fact(b *v1alpha1.Backup) taken {
	t := taken{name: b.Name, phase: b.Status.Phase, made: b.CreationTimestamp.Time}
	if b.Status.CompletedAt != nil {
		t.finished = b.Status.CompletedAt.Time
	}
	return t
}

// backupFor is the Backup the schedule makes: its template, its label,
// and the finalizer that deletes its data when retention deletes it. It
// is not owned by the schedule: deleting a schedule keeps its backups.
func backupFor(sb *v1alpha1.ScheduledBackup, name string) *v1alpha1.Backup {
	return &v1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Namespace: sb.Namespace, Name: name,
			Labels:     map[string]string{v1alpha1.LabelScheduledBackup: sb.Name},
			Finalizers: []string{v1alpha1.BackupDataFinalizer}},
		Spec: sb.Spec.Backup,
	}
}

// lastOutcome is the schedule's Ready pass from its Backups (verdict),
// and sets the backup gauges.
func lastOutcome(sb *v1alpha1.ScheduledBackup, backups []v1alpha1.Backup) status.Pass {
	v := verdict(backups)
	clusterNS := cmp.Or(sb.Spec.Backup.ClusterNamespace, sb.Namespace)
	labels := []string{clusterNS, sb.Spec.Backup.Cluster, sb.Namespace, sb.Name}
	success := 0.0
	if v.lastSuccess != nil {
		success = float64(v.lastSuccess.Unix())
		sb.Status.LastSuccessfulTime = v.lastSuccess
	}
	metrics.BackupLastSuccess.WithLabelValues(labels...).Set(success)
	metrics.BackupLastFailed.WithLabelValues(labels...).Set(map[bool]float64{true: 1}[v.failed])
	return v.pass
}

// write sets sb's status when it changed.
func (r *Reconciler) write(ctx context.Context, sb *v1alpha1.ScheduledBackup, p status.Pass, next *metav1.Time) error {
	st := sb.Status.DeepCopy()
	st.ObservedGeneration = sb.Generation
	st.Conditions = status.ReadyConditions(st.Conditions, sb.Generation, metav1.Now(), p)
	st.NextScheduleTime = next
	if sb.Spec.Suspend {
		st.NextScheduleTime = nil
	}
	var live v1alpha1.ScheduledBackup
	if err := r.Get(ctx, client.ObjectKeyFromObject(sb), &live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if equality.Semantic.DeepEqual(&live.Status, st) {
		return nil
	}
	live.Status = *st
	return client.IgnoreNotFound(r.Status().Update(ctx, &live))
}
