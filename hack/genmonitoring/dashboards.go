package main

// A dashboard is a list of panels, each a PromQL query or a few. The
// queries aggregate by stream_name and consumer_name (not by server):
// stream and consumer series come from the leader, which moves.
//
// Its namespace and natscluster variables list the clusters that have
// scopeSeries: a NATS dashboard's come from the servers' own series, so
// that a team's Prometheus that scrapes its servers and not the operator
// still offers its clusters.
type dashboard struct {
	file, uid, title string
	scopeSeries      string
	panels           []panel
}

// The series the variables read: one per server, or one per cluster from
// the operator.
const (
	serverScope   = "kubenats_exporter_server_up"
	operatorScope = "kubenats_natscluster_servers"
)

type panel struct {
	title, unit string
	queries     []query
}

type query struct{ expr, legend string }

// sel is the selection every NATS query carries: the dashboard's
// namespace and cluster variables.
const sel = `namespace=~"$namespace",natscluster=~"$natscluster"`

func dashboards() []dashboard {
	return []dashboard{{
		file: "kubenats-servers.json", uid: "kubenats-servers", title: "kubenats / NATS servers and JetStream",
		scopeSeries: serverScope,
		panels: []panel{
			{"Server up", "short", []query{{`kubenats_exporter_server_up{` + sel + `}`, "{{server_name}}"}}},
			{"Healthz (0 = ok)", "short", []query{{`nats_healthz_status{` + sel + `}`, "{{server_name}}"}}},
			{"Connections", "short", []query{{`nats_varz_connections{` + sel + `}`, "{{server_name}}"}}},
			{"Subscriptions", "short", []query{{`nats_varz_subscriptions{` + sel + `}`, "{{server_name}}"}}},
			{"Messages in / out per second", "ops", []query{
				{`sum by (server_name) (rate(nats_varz_in_msgs{` + sel + `}[5m]))`, "in {{server_name}}"},
				{`sum by (server_name) (rate(nats_varz_out_msgs{` + sel + `}[5m]))`, "out {{server_name}}"}}},
			{"Bytes in / out per second", "Bps", []query{
				{`sum by (server_name) (rate(nats_varz_in_bytes{` + sel + `}[5m]))`, "in {{server_name}}"},
				{`sum by (server_name) (rate(nats_varz_out_bytes{` + sel + `}[5m]))`, "out {{server_name}}"}}},
			{"Slow consumers (5m)", "short", []query{{`increase(nats_varz_slow_consumers{` + sel + `}[5m])`, "{{server_name}}"}}},
			{"Memory", "bytes", []query{{`nats_varz_mem{` + sel + `}`, "{{server_name}}"}}},
			{"CPU %", "percent", []query{{`nats_varz_cpu{` + sel + `}`, "{{server_name}}"}}},
			{"Routes", "short", []query{{`nats_varz_routes{` + sel + `}`, "{{server_name}}"}}},
			{"Uptime", "s", []query{{`nats_varz_uptime_seconds{` + sel + `}`, "{{server_name}}"}}},
			{"JetStream file store used", "percentunit", []query{{`nats_server_used_storage{` + sel + `} / (nats_server_max_storage{` + sel + `} > 0)`, "{{server_name}}"}}},
			{"JetStream memory store used", "percentunit", []query{{`nats_server_used_memory{` + sel + `} / (nats_server_max_memory{` + sel + `} > 0)`, "{{server_name}}"}}},
			{"JetStream API errors per second", "ops", []query{{`rate(nats_server_api_errors{` + sel + `}[5m])`, "{{server_name}}"}}},
			{"Meta leader", "short", []query{{`count by (meta_leader) (nats_server_total_streams{` + sel + `})`, "{{meta_leader}}"}}},
			{"Meta group replicas current", "short", []query{{`nats_server_meta_replica_current{` + sel + `}`, "{{replica}}"}}},
			{"Account storage", "bytes", []query{{`nats_account_used_storage{` + sel + `}`, "{{account}}"}}},
			{"Account storage of its limit (JWT accounts)", "percentunit", []query{{`max by (account, account_id) (nats_account_used_storage{` + sel + `}) / max by (account, account_id) (nats_account_max_storage{` + sel + `} > 0)`, "{{account}}"}}},
			{"Account memory of its limit (JWT accounts)", "percentunit", []query{{`max by (account, account_id) (nats_account_used_memory{` + sel + `}) / max by (account, account_id) (nats_account_max_memory{` + sel + `} > 0)`, "{{account}}"}}},
		},
	}, {
		file: "kubenats-streams.json", uid: "kubenats-streams", title: "kubenats / Streams and consumers",
		scopeSeries: serverScope,
		panels: []panel{
			{"Messages per stream", "short", []query{{`max by (account, stream_name) (nats_stream_total_messages{` + sel + `})`, "{{stream_name}}"}}},
			{"Bytes per stream", "bytes", []query{{`max by (account, stream_name) (nats_stream_total_bytes{` + sel + `})`, "{{stream_name}}"}}},
			{"Messages stored per second", "ops", []query{{`max by (account, stream_name) (deriv(nats_stream_last_seq{` + sel + `}[5m]))`, "{{stream_name}}"}}},
			{"Subjects per stream", "short", []query{{`max by (account, stream_name) (nats_stream_subject_count{` + sel + `})`, "{{stream_name}}"}}},
			{"Replicas not current", "short", []query{{`count by (account, stream_name) (nats_stream_replica_current{` + sel + `} == 0)`, "{{stream_name}}"}}},
			{"Replica lag", "short", []query{{`max by (account, stream_name, replica) (nats_stream_replica_lag{` + sel + `})`, "{{stream_name}} {{replica}}"}}},
			{"Mirror and source lag", "short", []query{
				{`max by (stream_name, mirror_name) (nats_stream_mirror_lag{` + sel + `})`, "{{stream_name}} <- {{mirror_name}}"},
				{`max by (stream_name, source_name) (nats_stream_source_lag{` + sel + `})`, "{{stream_name}} <- {{source_name}}"}}},
			{"Consumer pending", "short", []query{{`max by (account, stream_name, consumer_name) (nats_consumer_num_pending{` + sel + `})`, "{{stream_name}}/{{consumer_name}}"}}},
			{"Consumer ack pending", "short", []query{{`max by (account, stream_name, consumer_name) (nats_consumer_num_ack_pending{` + sel + `})`, "{{stream_name}}/{{consumer_name}}"}}},
			{"Redelivered", "short", []query{{`max by (account, stream_name, consumer_name) (nats_consumer_num_redelivered{` + sel + `})`, "{{stream_name}}/{{consumer_name}}"}}},
			{"Pull requests waiting", "short", []query{{`max by (account, stream_name, consumer_name) (nats_consumer_num_waiting{` + sel + `})`, "{{stream_name}}/{{consumer_name}}"}}},
			{"Delivered and acknowledged per second", "ops", []query{
				{`max by (stream_name, consumer_name) (deriv(nats_consumer_delivered_stream_seq{` + sel + `}[5m]))`, "delivered {{consumer_name}}"},
				{`max by (stream_name, consumer_name) (deriv(nats_consumer_ack_floor_stream_seq{` + sel + `}[5m]))`, "acked {{consumer_name}}"}}},
			{"Series dropped by the bound", "short", []query{{`sum by (server_name) (increase(kubenats_exporter_series_dropped_total{` + sel + `}[1h]))`, "{{server_name}}"}}},
		},
	}, {
		file: "kubenats-operator.json", uid: "kubenats-operator", title: "kubenats / Operator",
		scopeSeries: operatorScope,
		panels: []panel{
			{"NatsClusters not Ready", "short", []query{{`sum by (namespace, natscluster) (kubenats_natscluster_condition{type="Ready",status!="True",` + sel + `})`, "{{namespace}}/{{natscluster}}"}}},
			{"Servers ready / asked for", "short", []query{
				{`kubenats_natscluster_servers_ready{` + sel + `}`, "ready {{natscluster}}"},
				{`kubenats_natscluster_servers{` + sel + `}`, "asked {{natscluster}}"}}},
			{"Servers pending (rollout, scale-down)", "short", []query{{`kubenats_natscluster_servers_pending{` + sel + `}`, "{{natscluster}}"}}},
			{"Reload pending", "short", []query{{`kubenats_natscluster_reload_pending{` + sel + `}`, "{{natscluster}}"}}},
			{"Days to certificate expiry", "d", []query{{`(kubenats_natscluster_certificate_expiry_timestamp_seconds{` + sel + `} - time()) / 86400`, "{{natscluster}}"}}},
			{"Mesh stage", "short", []query{{`kubenats_natscluster_mesh_stage{` + sel + `} == 1`, "{{natscluster}} {{stage}}"}}},
			{"JetStream resources by state", "short", []query{{`sum by (kind, state) (kubenats_jetstream_resources{namespace=~"$namespace"})`, "{{kind}} {{state}}"}}},
			{"Reconciles per second", "ops", []query{{`sum by (controller, result) (rate(controller_runtime_reconcile_total[5m]))`, "{{controller}} {{result}}"}}},
			{"Reconcile errors per second", "ops", []query{{`sum by (controller) (rate(controller_runtime_reconcile_errors_total[5m]))`, "{{controller}}"}}},
			{"Reconcile time p99", "s", []query{{`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[5m])))`, "{{controller}}"}}},
			{"Work queue depth", "short", []query{{`workqueue_depth`, "{{name}}"}}},
			{"JetStream pool connections", "short", []query{{`kubenats_jetstream_pool_connections`, "connections"}}},
		},
	}}
}

// json is d in Grafana's dashboard model, with a Prometheus data source
// variable and the namespace and natscluster variables the queries use.
func (d dashboard) json() map[string]any {
	var panels []map[string]any
	for i, p := range d.panels {
		var targets []map[string]any
		for j, q := range p.queries {
			targets = append(targets, map[string]any{
				"datasource": map[string]any{"type": "prometheus", "uid": "${datasource}"},
				"expr":       q.expr, "legendFormat": q.legend, "refId": string(rune('A' + j)),
			})
		}
		panels = append(panels, map[string]any{
			"id": i + 1, "type": "timeseries", "title": p.title,
			"datasource":  map[string]any{"type": "prometheus", "uid": "${datasource}"},
			"gridPos":     map[string]any{"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.unit}, "overrides": []any{}},
			"options":     map[string]any{"legend": map[string]any{"displayMode": "list", "placement": "bottom"}},
			"targets":     targets,
		})
	}
	variable := func(name, query string) map[string]any {
		return map[string]any{
			"name": name, "label": name, "type": "query", "includeAll": true, "multi": true, "allValue": ".*",
			"datasource": map[string]any{"type": "prometheus", "uid": "${datasource}"},
			"query":      map[string]any{"query": query, "refId": name},
			"refresh":    2, "current": map[string]any{"text": "All", "value": "$__all"},
		}
	}
	return map[string]any{
		"uid": d.uid, "title": d.title, "tags": []string{"kubenats", "nats"},
		"schemaVersion": 39, "version": 1, "editable": true, "timezone": "browser",
		"time":    map[string]any{"from": "now-6h", "to": "now"},
		"refresh": "30s",
		"panels":  panels,
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
			variable("namespace", "label_values("+d.scopeSeries+", namespace)"),
			variable("natscluster", "label_values("+d.scopeSeries+`{namespace=~"$namespace"}, natscluster)`),
		}},
	}
}
