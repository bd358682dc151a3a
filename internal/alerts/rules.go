// Package alerts holds the alerting rules for kubenats clusters, as Go,
// so that the PrometheusRule the operator renders per cluster and the file
// shipped in config/prometheus (hack/genalerts) come from one source, and
// a test parses every expression and checks every series it names is one
// the project serves.
package alerts

import (
	"fmt"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Rule is one alert before it is given a scope.
type Rule struct {
	Name     string
	Expr     string // with {{S}} where the scope's matchers go
	For      string
	Severity string
	Summary  string
	Help     string
}

// scope is where the matchers of a scope go in Expr: {{S}} becomes
// `namespace="a",natscluster="b"` (or nothing), inside braces the
// expression already writes.
const scope = "{{S}}"

// Rules are the alerts, in the order the PrometheusRule lists them.
var Rules = []Rule{
	{
		Name: "NatsServerDown", For: "2m", Severity: "critical",
		// A server whose pod is gone serves no series at all: the
		// operator's count of ready servers says so instead.
		// A rollout takes servers down one at a time on purpose; while it
		// has servers pending, NatsRolloutStalled watches it instead.
		Expr:    `kubenats_exporter_server_up{` + scope + `} == 0 or ((kubenats_natscluster_servers{` + scope + `} - kubenats_natscluster_servers_ready{` + scope + `}) > 0 unless kubenats_natscluster_servers_pending{` + scope + `} > 0)`,
		Summary: "A NATS server of {{ $labels.namespace }}/{{ $labels.natscluster }} is down",
		Help:    "A metrics container cannot read its server's monitor port ({{ $labels.server_name }}), or fewer servers are ready than asked for: the server is down, hung or not scheduled.",
	},
	{
		Name: "NatsClusterNotReady", For: "10m", Severity: "warning",
		Expr:    `kubenats_natscluster_condition{type="Ready",status!="True"` + sep + scope + `} == 1`,
		Summary: "NatsCluster {{ $labels.namespace }}/{{ $labels.natscluster }} is not Ready",
		Help:    "Its Ready condition has been {{ $labels.status }} for 10 minutes: kubectl describe natscluster says why.",
	},
	{
		Name: "NatsJetStreamStorageHigh", For: "10m", Severity: "warning",
		Expr:    `nats_server_used_storage{` + scope + `} / (nats_server_max_storage{` + scope + `} > 0) > 0.8`,
		Summary: "JetStream storage of {{ $labels.server_name }} above 80 %",
		Help:    "{{ $labels.server_name }} uses {{ $value | humanizePercentage }} of its file store: grow the volume or tighten the streams' limits.",
	},
	{
		Name: "NatsJetStreamStorageCritical", For: "5m", Severity: "critical",
		Expr:    `nats_server_used_storage{` + scope + `} / (nats_server_max_storage{` + scope + `} > 0) > 0.9`,
		Summary: "JetStream storage of {{ $labels.server_name }} above 90 %",
		Help:    "{{ $labels.server_name }} uses {{ $value | humanizePercentage }} of its file store; at 100 % publishes fail.",
	},
	{
		Name: "NatsAccountStorageHigh", For: "10m", Severity: "warning",
		Expr:    accountStorage + ` > 0.8`,
		Summary: "JetStream storage of account {{ $labels.account }} above 80 % of its limit",
		Help:    "Account {{ $labels.account }} uses {{ $value | humanizePercentage }} of the file store its NatsAccount allows: raise spec.limits.jetstream.diskStorage or tighten its streams' limits.",
	},
	{
		Name: "NatsAccountStorageCritical", For: "5m", Severity: "critical",
		Expr:    accountStorage + ` > 0.9`,
		Summary: "JetStream storage of account {{ $labels.account }} above 90 % of its limit",
		Help:    "Account {{ $labels.account }} uses {{ $value | humanizePercentage }} of the file store its NatsAccount allows; at 100 % its publishes to file streams fail.",
	},
	{
		Name: "NatsConsumerPendingGrowing", For: "15m", Severity: "warning",
		Expr:    `max by (namespace, natscluster, account, stream_name, consumer_name) (deriv(nats_consumer_num_pending{` + scope + `}[15m])) > 0 and max by (namespace, natscluster, account, stream_name, consumer_name) (nats_consumer_num_pending{` + scope + `}) > 1000`,
		Summary: "Consumer {{ $labels.stream_name }}/{{ $labels.consumer_name }} falls behind",
		Help:    "Its pending messages have grown for 15 minutes and are over 1000: its subscribers do not keep up.",
	},
	{
		Name: "NatsStreamWithoutLeader", For: "1m", Severity: "critical",
		Expr:    `max by (namespace, natscluster, account, stream_name) (nats_stream_without_leader{` + scope + `}) > 0`,
		Summary: "Stream {{ $labels.stream_name }} has no leader",
		Help:    "No server leads stream {{ $labels.stream_name }} of account {{ $labels.account }}: it takes no messages.",
	},
	{
		Name: "NatsStreamReplicaNotCurrent", For: "10m", Severity: "warning",
		Expr:    `min by (namespace, natscluster, account, stream_name, replica) (nats_stream_replica_current{` + scope + `}) == 0`,
		Summary: "A replica of stream {{ $labels.stream_name }} is not current",
		Help:    "Replica {{ $labels.replica }} of {{ $labels.stream_name }} has lagged its leader for 10 minutes: a rollout waits for it.",
	},
	{
		// A standby (a mirror of another cluster's stream) that has not
		// once been within 100 messages of its origin for 10 minutes,
		// and still is not: what it would lose if promoted now.
		Name: "NatsStreamMirrorBehind", For: "5m", Severity: "warning",
		Expr:    `min by (namespace, natscluster, account, stream_name, mirror_name) (min_over_time(nats_stream_mirror_lag{` + scope + `}[10m])) > 100`,
		Summary: "Mirror {{ $labels.stream_name }} falls behind {{ $labels.mirror_name }}",
		Help:    "The mirror has lagged its origin by more than 100 messages for 15 minutes ({{ $value }} now): check the link to the origin (leafnode, gateway, credentials) before relying on it as a standby.",
	},
	{
		// The Job tried three times before the Backup failed; the
		// schedule takes the next one when it is due.
		Name: "NatsBackupFailed", For: "1m", Severity: "warning",
		Expr:    `kubenats_backup_last_failed{` + scope + `} == 1`,
		Summary: "The last backup of ScheduledBackup {{ $labels.scheduledbackup_namespace }}/{{ $labels.scheduledbackup }} failed",
		Help:    "Its newest Backup failed after its Job's retries: kubectl describe scheduledbackup {{ $labels.scheduledbackup }} names it, and kubectl describe backup says why.",
	},
	{
		Name: "NatsSlowConsumers", For: "5m", Severity: "warning",
		Expr:    `increase(nats_varz_slow_consumers{` + scope + `}[5m]) > 0`,
		Summary: "Slow consumers on {{ $labels.server_name }}",
		Help:    "{{ $labels.server_name }} cut off clients that did not read fast enough in the last 5 minutes.",
	},
	{
		Name: "NatsCertificateExpiringSoon", For: "1h", Severity: "warning",
		Expr:    `kubenats_natscluster_certificate_expiry_timestamp_seconds{` + scope + `} - time() < 14 * 86400`,
		Summary: "A certificate of {{ $labels.namespace }}/{{ $labels.natscluster }} expires within 14 days",
		Help:    "Renewal should have happened by now: check cert-manager's Certificate or the Secret you provide.",
	},
	{
		Name: "NatsRolloutStalled", For: "30m", Severity: "warning",
		Expr:    `kubenats_natscluster_servers_pending{` + scope + `} > 0`,
		Summary: "Rollout of {{ $labels.namespace }}/{{ $labels.natscluster }} stalled",
		Help:    "{{ $value }} servers have waited 30 minutes for the current revision: the Ready condition says what the rollout waits for.",
	},
	{
		Name: "NatsReloadStalled", For: "15m", Severity: "warning",
		Expr:    `kubenats_natscluster_reload_pending{` + scope + `} == 1`,
		Summary: "Configuration of {{ $labels.namespace }}/{{ $labels.natscluster }} not loaded",
		Help:    "Some server has not confirmed the current configuration for 15 minutes: see the ConfigLoaded condition.",
	},
	{
		// The operator never loosens STRICT by itself unless the spec asks
		// (rollback: Automatic): a mesh fault is reported, and paged here.
		Name: "NatsMeshUnhealthy", For: "5m", Severity: "warning",
		Expr:    `kubenats_natscluster_condition{type="MeshReady",status="False"` + sep + scope + `} == 1`,
		Summary: "The Istio mesh of {{ $labels.namespace }}/{{ $labels.natscluster }} is unhealthy",
		Help:    "MeshReady has been False for 5 minutes: a sidecar is missing or not ready, or routes are down under STRICT (StrictUnhealthy), or the operator went back to PERMISSIVE (RolledBack). kubectl describe natscluster says which.",
	},
	{
		Name: "KubenatsReconcileErrors", For: "15m", Severity: "warning",
		Expr:    `sum by (controller) (rate(controller_runtime_reconcile_errors_total[5m])) > 0`,
		Summary: "The kubenats operator fails to reconcile {{ $labels.controller }}",
		Help:    "Reconciles of {{ $labels.controller }} have failed for 15 minutes: the operator's log says why.",
	},
}

// accountStorage is an account's file store used over its limit. Both
// come from the meta leader; max by drops the server's labels so that a
// meta leader that moves neither splits the alert nor restarts its `for`.
// An account without a limit (no series, or 0: no file store) has no
// ratio.
const accountStorage = `max by (namespace, natscluster, account, account_id) (nats_account_used_storage{` + scope + `}) / max by (namespace, natscluster, account, account_id) (nats_account_max_storage{` + scope + `} > 0)`

// sep joins a scope to matchers already written; Scoped drops it when the
// scope is empty.
const sep = ",{{SEP}}"

// Scoped is expr with its scope filled in: matchers, or nothing.
func Scoped(expr, namespace, cluster string) string {
	matchers := ""
	if namespace != "" {
		matchers = fmt.Sprintf("namespace=%q,natscluster=%q", namespace, cluster)
	}
	if matchers == "" {
		expr = strings.ReplaceAll(expr, sep, "")
	} else {
		expr = strings.ReplaceAll(expr, sep, ",")
	}
	expr = strings.ReplaceAll(expr, "{{SEP}}", "")
	expr = strings.ReplaceAll(expr, scope, matchers)
	return strings.ReplaceAll(expr, "{}", "")
}

// Groups are the rules as a PrometheusRule's groups, scoped to one
// cluster (namespace and cluster set) or to every cluster (both empty).
// The operator's own rule (reconcile errors) is not per cluster: it goes
// only with the unscoped groups.
func Groups(namespace, cluster string) []monitoringv1.RuleGroup {
	var rules []monitoringv1.Rule
	for _, r := range Rules {
		if namespace != "" && !strings.Contains(r.Expr, scope) {
			continue
		}
		d := monitoringv1.Duration(r.For)
		rules = append(rules, monitoringv1.Rule{
			Alert:       r.Name,
			Expr:        intstr.FromString(Scoped(r.Expr, namespace, cluster)),
			For:         &d,
			Labels:      map[string]string{"severity": r.Severity},
			Annotations: map[string]string{"summary": r.Summary, "description": r.Help},
		})
	}
	return []monitoringv1.RuleGroup{{Name: "kubenats", Rules: rules}}
}
