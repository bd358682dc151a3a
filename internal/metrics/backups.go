package metrics

import "github.com/prometheus/client_golang/prometheus"

// A ScheduledBackup's last outcome, by its cluster (namespace and
// natscluster, as every cluster series, so that the cluster's alerts,
// scoped by those two, see a tenant's schedule of another namespace) and
// by the schedule (scheduledbackup_namespace and scheduledbackup): what
// the backup alert reads. A schedule that is deleted has its
// series deleted with it (ForgetSchedule).
var (
	BackupLastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: BackupLastSuccessTime,
		Help: "When the ScheduledBackup's newest Succeeded backup finished, Unix seconds; 0 before its first.",
	}, []string{"namespace", "natscluster", "scheduledbackup_namespace", "scheduledbackup"})
	BackupLastFailed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: BackupLastFailedName,
		Help: "1 while the ScheduledBackup's last backup failed (after its Job's retries), 0 otherwise.",
	}, []string{"namespace", "natscluster", "scheduledbackup_namespace", "scheduledbackup"})
)

// ForgetSchedule ends the series of a deleted ScheduledBackup.
func ForgetSchedule(namespace, name string) {
	match := prometheus.Labels{"scheduledbackup_namespace": namespace, "scheduledbackup": name}
	BackupLastSuccess.DeletePartialMatch(match)
	BackupLastFailed.DeletePartialMatch(match)
}
