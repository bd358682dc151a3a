package promql

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"

	"github.com/kubenats/kubenats/internal/alerts"
)

// scenario is a history of series (promqltest's load syntax, one sample
// a minute from time 0) and whether alert is firing at its end.
type scenario struct {
	alert, name string
	series      []string
	minutes     int
	fires       bool
}

// The series every scenario's cluster carries: namespace a, NatsCluster c.
const (
	srv     = `namespace="a",natscluster="c",server_id="nats-1",server_name="nats-1"`
	cl      = `namespace="a",natscluster="c"`
	stream  = `namespace="a",natscluster="c",server_name="nats-0",account="APP",stream_name="ORDERS"`
	consume = stream + `,consumer_name="worker"`
)

// steady is a series holding v for n minutes (n+1 samples).
func steady(name, labels, v string, n int) string {
	return name + "{" + labels + "} " + v + "x" + strconv.Itoa(n)
}

// cluster is the operator's gauges of a cluster with servers asked for,
// ready and pending over n minutes.
func cluster(servers, ready, pending string, n int) []string {
	return []string{
		"kubenats_natscluster_servers{" + cl + "} " + servers,
		"kubenats_natscluster_servers_ready{" + cl + "} " + ready,
		"kubenats_natscluster_servers_pending{" + cl + "} " + pending,
		steady("kubenats_exporter_server_up", srv, "1", n),
	}
}

// acct is the labels of account APP's series served by nats-<server>, the
// meta leader.
func acct(server string) string {
	return `namespace="a",natscluster="c",server_id="nats-` + server + `",server_name="nats-` + server + `",account="APP",account_id="AAPP"`
}

// account is account APP's storage used and its limit, as nats-<server>
// serves them, in promqltest's value syntax.
func account(server, used, limit string) []string {
	return []string{
		"nats_account_used_storage{" + acct(server) + "} " + used,
		"nats_account_max_storage{" + acct(server) + "} " + limit,
	}
}

// scenarios: for every alert, a history that must page and a near miss
// that must not (what a careless expression gets wrong: a rollout's
// planned restarts, a store without a limit, a constant backlog, a
// counter that stopped).
var scenarios = []scenario{
	{alert: "NatsServerDown", name: "metrics container cannot read its server", minutes: 5, fires: true,
		series: []string{"kubenats_exporter_server_up{" + srv + "} 1 0x4", steady("kubenats_natscluster_servers", cl, "3", 5), steady("kubenats_natscluster_servers_ready", cl, "3", 5), steady("kubenats_natscluster_servers_pending", cl, "0", 5)}},
	{alert: "NatsServerDown", name: "a server not ready, no rollout", minutes: 5, fires: true,
		series: cluster("3x5", "3 2x4", "0x5", 5)},
	{alert: "NatsServerDown", name: "a rollout restarting servers for 5 minutes", minutes: 5,
		series: cluster("3x5", "3 2x4", "0 2 2 1 1 1", 5)},
	{alert: "NatsServerDown", name: "a server down for one minute", minutes: 5,
		series: cluster("3x5", "3 3 3 2 3 3", "0x5", 5)},

	{alert: "NatsClusterNotReady", name: "Ready False for 15 minutes", minutes: 15, fires: true,
		series: []string{steady("kubenats_natscluster_condition", cl+`,type="Ready",status="False"`, "1", 15), steady("kubenats_natscluster_condition", cl+`,type="Ready",status="True"`, "0", 15)}},
	{alert: "NatsClusterNotReady", name: "Ready True", minutes: 15,
		series: []string{steady("kubenats_natscluster_condition", cl+`,type="Ready",status="False"`, "0", 15), steady("kubenats_natscluster_condition", cl+`,type="Ready",status="True"`, "1", 15)}},

	{alert: "NatsJetStreamStorageHigh", name: "85 % for 15 minutes", minutes: 15, fires: true,
		series: []string{steady("nats_server_used_storage", srv, "85", 15), steady("nats_server_max_storage", srv, "100", 15)}},
	{alert: "NatsJetStreamStorageHigh", name: "70 %", minutes: 15,
		series: []string{steady("nats_server_used_storage", srv, "70", 15), steady("nats_server_max_storage", srv, "100", 15)}},
	{alert: "NatsJetStreamStorageHigh", name: "no limit", minutes: 15,
		series: []string{steady("nats_server_used_storage", srv, "85", 15), steady("nats_server_max_storage", srv, "0", 15)}},
	{alert: "NatsJetStreamStorageCritical", name: "95 % for 10 minutes", minutes: 10, fires: true,
		series: []string{steady("nats_server_used_storage", srv, "95", 10), steady("nats_server_max_storage", srv, "100", 10)}},
	{alert: "NatsJetStreamStorageCritical", name: "85 %", minutes: 10,
		series: []string{steady("nats_server_used_storage", srv, "85", 10), steady("nats_server_max_storage", srv, "100", 10)}},

	{alert: "NatsAccountStorageHigh", name: "an account at 85 % of its limit for 15 minutes, its server at 10 %", minutes: 15, fires: true,
		series: append(account("0", "85x15", "100x15"), steady("nats_server_used_storage", srv, "10", 15), steady("nats_server_max_storage", srv, "100", 15))},
	{alert: "NatsAccountStorageHigh", name: "the meta leader moves while an account is at 85 %", minutes: 15, fires: true,
		series: append(account("0", "85x7 _x8", "100x7 _x8"), account("1", "_x7 85x8", "_x7 100x8")...)},
	{alert: "NatsAccountStorageHigh", name: "70 %", minutes: 15,
		series: account("0", "70x15", "100x15")},
	{alert: "NatsAccountStorageHigh", name: "a server at 85 %, its account unlimited", minutes: 15,
		series: []string{steady("nats_account_used_storage", acct("0"), "85", 15), steady("nats_server_used_storage", srv, "85", 15), steady("nats_server_max_storage", srv, "100", 15)}},
	{alert: "NatsAccountStorageHigh", name: "an account without file store (limit 0)", minutes: 15,
		series: account("0", "0x15", "0x15")},
	{alert: "NatsAccountStorageCritical", name: "95 % for 10 minutes", minutes: 10, fires: true,
		series: account("0", "95x10", "100x10")},
	{alert: "NatsAccountStorageCritical", name: "85 %", minutes: 10,
		series: account("0", "85x10", "100x10")},

	{alert: "NatsConsumerPendingGrowing", name: "pending grows past 1000", minutes: 40, fires: true,
		series: []string{"nats_consumer_num_pending{" + consume + "} 2000+100x40"}},
	{alert: "NatsConsumerPendingGrowing", name: "a large constant backlog", minutes: 40,
		series: []string{steady("nats_consumer_num_pending", consume, "5000", 40)}},
	{alert: "NatsConsumerPendingGrowing", name: "growing, still small", minutes: 40,
		series: []string{"nats_consumer_num_pending{" + consume + "} 0+10x40"}},

	{alert: "NatsStreamWithoutLeader", name: "no leader for 3 minutes", minutes: 3, fires: true,
		series: []string{steady("nats_stream_without_leader", stream, "1", 3)}},
	{alert: "NatsStreamWithoutLeader", name: "a leader", minutes: 3,
		series: []string{steady("nats_stream_without_leader", stream, "0", 3)}},

	{alert: "NatsStreamReplicaNotCurrent", name: "a follower behind for 15 minutes", minutes: 15, fires: true,
		series: []string{steady("nats_stream_replica_current", stream+`,replica="nats-2"`, "0", 15), steady("nats_stream_replica_current", stream+`,replica="nats-1"`, "1", 15)}},
	{alert: "NatsStreamReplicaNotCurrent", name: "behind for 5 minutes, then current", minutes: 15,
		series: []string{"nats_stream_replica_current{" + stream + `,replica="nats-2"} 0x5 1x10`}},

	{alert: "NatsStreamMirrorBehind", name: "a standby 5000 behind for 20 minutes", minutes: 20, fires: true,
		series: []string{steady("nats_stream_mirror_lag", stream+`,mirror_name="ORIGIN"`, "5000", 20)}},
	{alert: "NatsStreamMirrorBehind", name: "behind under load, caught up every few minutes", minutes: 20,
		series: []string{"nats_stream_mirror_lag{" + stream + `,mirror_name="ORIGIN"} 0 800x6 0 800x6 0 800x4`}},

	{alert: "NatsBackupFailed", name: "the last backup failed", minutes: 5, fires: true,
		series: []string{steady("kubenats_backup_last_failed", cl+`,scheduledbackup_namespace="team",scheduledbackup="nightly"`, "1", 5)}},
	{alert: "NatsBackupFailed", name: "failed once, the next one succeeded", minutes: 5,
		series: []string{"kubenats_backup_last_failed{" + cl + `,scheduledbackup_namespace="team",scheduledbackup="nightly"} 1 0x4`}},

	{alert: "NatsSlowConsumers", name: "slow consumers cut off every minute", minutes: 10, fires: true,
		series: []string{"nats_varz_slow_consumers{" + srv + "} 0+1x10"}},
	{alert: "NatsSlowConsumers", name: "some long ago, none since", minutes: 10,
		series: []string{steady("nats_varz_slow_consumers", srv, "7", 10)}},

	{alert: "NatsCertificateExpiringSoon", name: "expires in 7 days", minutes: 70, fires: true,
		series: []string{steady("kubenats_natscluster_certificate_expiry_timestamp_seconds", cl, strconv.Itoa(7*86400), 70)}},
	{alert: "NatsCertificateExpiringSoon", name: "expires in 60 days", minutes: 70,
		series: []string{steady("kubenats_natscluster_certificate_expiry_timestamp_seconds", cl, strconv.Itoa(60*86400), 70)}},

	{alert: "NatsRolloutStalled", name: "a server pending for 40 minutes", minutes: 40, fires: true,
		series: []string{steady("kubenats_natscluster_servers_pending", cl, "1", 40)}},
	{alert: "NatsRolloutStalled", name: "a rollout of 10 minutes", minutes: 40,
		series: []string{"kubenats_natscluster_servers_pending{" + cl + "} 3 2x4 1x4 0x30"}},

	{alert: "NatsReloadStalled", name: "not loaded for 20 minutes", minutes: 20, fires: true,
		series: []string{steady("kubenats_natscluster_reload_pending", cl, "1", 20)}},
	{alert: "NatsReloadStalled", name: "loaded after 2 minutes", minutes: 20,
		series: []string{"kubenats_natscluster_reload_pending{" + cl + "} 1x2 0x18"}},

	{alert: "NatsMeshUnhealthy", name: "MeshReady False for 10 minutes", minutes: 10, fires: true,
		series: []string{steady("kubenats_natscluster_condition", cl+`,type="MeshReady",status="False"`, "1", 10)}},
	{alert: "NatsMeshUnhealthy", name: "MeshReady True, Ready False", minutes: 10,
		series: []string{steady("kubenats_natscluster_condition", cl+`,type="MeshReady",status="False"`, "0", 10), steady("kubenats_natscluster_condition", cl+`,type="Ready",status="False"`, "1", 10)}},

	{alert: "KubenatsReconcileErrors", name: "errors every minute for 30 minutes", minutes: 30, fires: true,
		series: []string{`controller_runtime_reconcile_errors_total{controller="natscluster"} 0+3x30`}},
	{alert: "KubenatsReconcileErrors", name: "errors long ago", minutes: 30,
		series: []string{steady("controller_runtime_reconcile_errors_total", `controller="natscluster"`, "12", 30)}},
}

// TestEveryAlertFiresAndHoldsItsFire: each alert of config/prometheus/rules.yaml,
// evaluated the
// way Prometheus's rule manager does (its own AlertingRule, its `for`
// unchanged) every 30 s over each scenario's series: firing at the end of
// its scenario, and never firing through its near miss. Every alert has
// both. Careless variants watched failing: NatsServerDown without the
// `unless` on servers_pending ("a rollout restarting servers for 5
// minutes" fires); NatsJetStreamStorageHigh dividing by max_storage
// without `> 0` ("no limit" fires, +Inf > 0.8); NatsConsumerPendingGrowing
// on num_pending > 1000 alone ("a large constant backlog" fires);
// NatsAccountStorageHigh dividing the account's series as they are, with
// their server's labels ("the meta leader moves while an account is at
// 85 %" does not fire: the new leader's series starts its `for` again);
// NatsStreamMirrorBehind on the lag alone, without min_over_time ("behind
// under load, caught up every few minutes" fires).
func TestEveryAlertFiresAndHoldsItsFire(t *testing.T) {
	shipped := map[string]monitoringv1.Rule{}
	for _, r := range shippedRules(t) {
		shipped[r.Alert] = r
	}
	covered := map[string][2]bool{}
	for _, sc := range scenarios {
		r, ok := shipped[sc.alert]
		if !ok {
			t.Fatalf("scenario %q names no shipped alert %s", sc.name, sc.alert)
		}
		c := covered[sc.alert]
		c[btoi(sc.fires)] = true
		covered[sc.alert] = c
		t.Run(sc.alert+"/"+sc.name, func(t *testing.T) {
			checkSeriesServed(t, sc.series)
			firingAt, everFired := evaluate(t, r, sc)
			switch {
			case sc.fires && !firingAt:
				t.Errorf("%s is not firing after %d minutes of %s", sc.alert, sc.minutes, sc.name)
			case !sc.fires && everFired:
				t.Errorf("%s fired for %s", sc.alert, sc.name)
			}
		})
	}
	var missing []string
	for name := range shipped {
		if c := covered[name]; !c[0] || !c[1] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("alerts without both a firing scenario and a near miss: %v", missing)
	}
}

// TestClusterRulesFireForTheirClusterOnly: the PrometheusRule the operator
// renders for NatsCluster a/other, over each firing scenario's series (of
// a/c), never fires. Careless variant watched failing: a scope without
// the natscluster matcher fires for every cluster of the namespace.
func TestClusterRulesFireForTheirClusterOnly(t *testing.T) {
	scoped := map[string]monitoringv1.Rule{}
	for _, r := range alerts.Groups("a", "other")[0].Rules {
		scoped[r.Alert] = r
	}
	for _, sc := range scenarios {
		r, ok := scoped[sc.alert]
		if !ok || !sc.fires {
			continue
		}
		t.Run(sc.alert+"/"+sc.name, func(t *testing.T) {
			if _, ever := evaluate(t, r, sc); ever {
				t.Errorf("%s of a/other fired on a/c's series", sc.alert)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// evaluate runs r over sc's series every 30 s: whether it is firing at
// the end, and whether it fired at any point.
func evaluate(t *testing.T, r monitoringv1.Rule, sc scenario) (firingAtEnd, everFired bool) {
	t.Helper()
	storage := promqltest.LoadedStorage(t, "load 1m\n  "+strings.Join(sc.series, "\n  "))
	t.Cleanup(func() { _ = storage.Close() })
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr.String())
	if err != nil {
		t.Fatalf("%s: %v", r.Alert, err)
	}
	hold, err := time.ParseDuration(string(*r.For))
	if err != nil {
		t.Fatalf("%s: for %q: %v", r.Alert, *r.For, err)
	}
	rule := rules.NewAlertingRule(r.Alert, expr, hold, 0, labels.FromMap(r.Labels), labels.FromMap(r.Annotations),
		labels.EmptyLabels(), "", true, slog.New(slog.DiscardHandler))
	query := rules.EngineQueryFunc(engine, storage)
	end := time.Unix(0, 0).Add(time.Duration(sc.minutes) * time.Minute)
	for at := time.Unix(0, 0); !at.After(end); at = at.Add(30 * time.Second) {
		if _, err := rule.Eval(context.Background(), 0, at, query, nil, 0); err != nil {
			t.Fatalf("%s at %s: %v", r.Alert, at.UTC().Format(time.TimeOnly), err)
		}
		firing := false
		for _, a := range rule.ActiveAlerts() {
			firing = firing || a.State == rules.StateFiring
		}
		everFired = everFired || firing
		firingAtEnd = firing
	}
	return firingAtEnd, everFired
}

// checkSeriesServed: a scenario speaks of series the project serves, so
// that a renamed series cannot leave its alert proven on a name nobody
// serves any more.
func checkSeriesServed(t *testing.T, series []string) {
	t.Helper()
	have := served()
	for _, s := range series {
		name := s[:strings.IndexAny(s, "{ ")]
		if !have[name] {
			t.Errorf("scenario series %s is not served", name)
		}
	}
}
