package metrics

// Names of the operator's own families. Families lists them with
// controller-runtime's that the alerts and dashboards use, for the tests
// that check every query against what is served.
const (
	ClusterCondition    = "kubenats_natscluster_condition"
	ClusterServers      = "kubenats_natscluster_servers"
	ClusterServersReady = "kubenats_natscluster_servers_ready"
	ClusterPending      = "kubenats_natscluster_servers_pending"
	ClusterReload       = "kubenats_natscluster_reload_pending"
	ClusterCertExpiry   = "kubenats_natscluster_certificate_expiry_timestamp_seconds"
	ClusterMeshStage    = "kubenats_natscluster_mesh_stage"
	ClusterWaiting      = "kubenats_natscluster_waiting"
	ClusterLeaders      = "kubenats_natscluster_leaders"
	JetStreamResources  = "kubenats_jetstream_resources"
	// JetStreamServerCalls and the two after it are counters
	// (jetstream_calls.go).
	JetStreamServerCalls      = "kubenats_jetstream_server_calls_total"
	JetStreamServerCallErrors = "kubenats_jetstream_server_call_errors_total"
	JetStreamWrites           = "kubenats_jetstream_server_writes_total"
	PoolConnections           = "kubenats_jetstream_pool_connections"
	// BackupLastSuccessTime and BackupLastFailedName are a
	// ScheduledBackup's (backups.go).
	BackupLastSuccessTime = "kubenats_backup_last_success_timestamp_seconds"
	BackupLastFailedName  = "kubenats_backup_last_failed"
)

// ControllerRuntime are the controller-runtime families the alerts and
// dashboards use; a test checks controller-runtime registers each.
var ControllerRuntime = []string{
	"controller_runtime_reconcile_errors_total",
	"controller_runtime_reconcile_total",
	"controller_runtime_reconcile_time_seconds_bucket",
	"workqueue_depth",
}

// Families are every operator family the alerts and dashboards may use.
func Families() []string {
	return append([]string{
		ClusterCondition, ClusterServers, ClusterServersReady, ClusterPending, ClusterReload,
		ClusterCertExpiry, ClusterMeshStage, ClusterWaiting, ClusterLeaders, JetStreamResources, PoolConnections,
		JetStreamServerCalls, JetStreamServerCallErrors, JetStreamWrites, BackupLastSuccessTime, BackupLastFailedName,
	}, ControllerRuntime...)
}
