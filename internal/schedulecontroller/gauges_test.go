package schedulecontroller

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/alerts"
	"github.com/kubenats/kubenats/internal/metrics"
)

// TestATenantsFailedScheduleIsInItsClustersAlertScope: the gauge of a
// schedule in a tenant's namespace, of a cluster in the platform's,
// carries the cluster's namespace where the cluster's PrometheusRule
// looks (namespace, natscluster), and the schedule's own namespace
// beside it; a deleted schedule's series go. Careless variant watched
// failing: namespace taken from the schedule, as before tenants could
// back up (the platform's NatsBackupFailed never saw it).
func TestATenantsFailedScheduleIsInItsClustersAlertScope(t *testing.T) {
	sb := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly"},
		Spec: v1alpha1.ScheduledBackupSpec{Backup: v1alpha1.BackupSpec{Cluster: "nats", ClusterNamespace: "platform", User: "backup"}}}
	failed := v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "nightly-1"}, Status: v1alpha1.BackupStatus{Phase: v1alpha1.BackupFailed}}
	lastOutcome(sb, []v1alpha1.Backup{failed})
	t.Cleanup(func() { metrics.ForgetSchedule("team", "nightly") })

	scope := alerts.Scoped(`kubenats_backup_last_failed{{{S}}}`, "platform", "nats")
	if !strings.Contains(scope, `namespace="platform"`) {
		t.Fatalf("the cluster's scope is %s", scope)
	}
	got := testutil.ToFloat64(metrics.BackupLastFailed.WithLabelValues("platform", "nats", "team", "nightly"))
	if got != 1 {
		t.Fatalf("kubenats_backup_last_failed{namespace=platform,natscluster=nats,scheduledbackup_namespace=team} = %v, want 1", got)
	}
	metrics.ForgetSchedule("team", "nightly")
	if n := testutil.CollectAndCount(metrics.BackupLastFailed); n != 0 {
		t.Errorf("%d series left after the schedule was forgotten", n)
	}
}
