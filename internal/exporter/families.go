package exporter

import "slices"

// Family is one metric family the exporter serves.
type Family struct {
	Name string
	Help string
	// Labels, in the order a Sample's values follow.
	Labels []string
	// Addition is true for a family prometheus-nats-exporter does not
	// serve: docs/monitoring.md lists them as kubenats additions.
	Addition bool
}

// Label sets. Every series ends with namespace and natscluster, which the
// exporter is given on its command line by render.
var (
	tail          = []string{"namespace", "natscluster"}
	serverLabels  = join([]string{"server_id", "server_name"}, tail)
	jsLabels      = join([]string{"server_id", "server_name", "cluster", "domain", "meta_leader", "is_meta_leader"}, tail)
	accountLabels = join([]string{"server_id", "server_name", "cluster", "domain", "account", "account_id"}, tail)
	streamLabels  = join([]string{"server_id", "server_name", "cluster", "domain", "meta_leader", "is_meta_leader",
		"account", "account_id", "stream_name", "stream_leader", "is_stream_leader"}, tail)
	consumerLabels = join(streamLabels[:len(streamLabels)-len(tail)], []string{"consumer_name", "consumer_leader", "is_consumer_leader"}, tail)
)

func join(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// withLabel is labels with one more label before the namespace and
// natscluster tail.
func withLabel(labels []string, extra string) []string {
	head := labels[:len(labels)-len(tail)]
	return join(head, []string{extra}, tail)
}

// varzFields are the /varz numbers served as nats_varz_<field>, as
// prometheus-nats-exporter serves every top-level number of /varz.
var varzFields = []string{
	"connections", "total_connections", "subscriptions", "slow_consumers",
	"in_msgs", "out_msgs", "in_bytes", "out_bytes", "mem", "cpu", "cores",
	"gomaxprocs", "routes", "remotes", "leafnodes", "max_connections",
	"max_payload", "stale_connections",
}

// Names of the families that code below refers to by name.
const (
	FamilyHealthz            = "nats_healthz_status"
	FamilyServerUp           = "kubenats_exporter_server_up"
	FamilySeriesDropped      = "kubenats_exporter_series_dropped_total"
	FamilyScrapeErrors       = "kubenats_exporter_scrape_errors_total"
	FamilyUptime             = "nats_varz_uptime_seconds"
	FamilyJetStreamDisabled  = "nats_server_jetstream_disabled"
	FamilyStreamMessages     = "nats_stream_total_messages"
	FamilyConsumerPending    = "nats_consumer_num_pending"
	FamilyStreamReplica      = "nats_stream_replica_current"
	FamilyStreamReplicaLag   = "nats_stream_replica_lag"
	FamilyStreamNoLeader     = "nats_stream_without_leader"
	FamilyConsumerReplica    = "nats_consumer_replica_current"
	FamilyConsumerReplicaLag = "nats_consumer_replica_lag"
	FamilyAccountMaxMemory   = "nats_account_max_memory"
	FamilyAccountMaxStorage  = "nats_account_max_storage"
)

var families = buildFamilies()

func buildFamilies() []Family {
	var out []Family
	for _, f := range varzFields {
		out = append(out, Family{Name: "nats_varz_" + f, Help: "/varz " + f + ".", Labels: serverLabels})
	}
	add := func(f Family) { out = append(out, f) }
	add(Family{Name: FamilyUptime, Help: "Seconds since the server started, by its own clock.", Labels: serverLabels, Addition: true})
	add(Family{Name: FamilyHealthz, Help: "/healthz: 0 when the server says ok, 1 otherwise.", Labels: serverLabels})
	add(Family{Name: FamilyServerUp, Help: "1 when the server's monitor port answered /varz this scrape, 0 when it did not.", Labels: serverLabels, Addition: true})
	add(Family{Name: FamilyScrapeErrors, Help: "Monitor endpoint reads that failed, by endpoint.", Labels: withLabel(serverLabels, "endpoint"), Addition: true})
	add(Family{Name: FamilySeriesDropped, Help: "Series left out by a bound: streams with their consumers past spec.monitoring.maxSeriesPerServer, account limits past 256 accounts or the scrape's time.", Labels: serverLabels, Addition: true})

	server := func(name, help string, addition bool) {
		add(Family{Name: name, Help: help, Labels: jsLabels, Addition: addition})
	}
	server(FamilyJetStreamDisabled, "1 when JetStream is disabled on the server.", false)
	server("nats_server_total_streams", "Streams this server holds a replica of.", false)
	server("nats_server_total_consumers", "Consumers this server holds a replica of.", false)
	server("nats_server_total_messages", "Messages stored on this server.", false)
	server("nats_server_total_message_bytes", "Bytes of messages stored on this server.", false)
	server("nats_server_max_memory", "JetStream memory store limit, bytes.", false)
	server("nats_server_max_storage", "JetStream file store limit, bytes.", false)
	server("nats_server_used_memory", "JetStream memory store in use, bytes.", true)
	server("nats_server_used_storage", "JetStream file store in use, bytes.", true)
	server("nats_server_api_total", "JetStream API requests this server handled.", true)
	server("nats_server_api_errors", "JetStream API requests this server answered with an error.", true)
	server("nats_server_meta_cluster_size", "Servers in the JetStream meta group, as this server sees it.", true)
	add(Family{Name: "nats_server_meta_replica_current", Help: "From the meta leader: 1 when a meta group replica is current, 0 when it is not.", Labels: withLabel(jsLabels, "replica"), Addition: true})
	add(Family{Name: "nats_server_meta_replica_lag", Help: "From the meta leader: Raft entries a meta group replica lags behind.", Labels: withLabel(jsLabels, "replica"), Addition: true})

	account := func(name, help string) {
		// Every server reports the account's usage over the whole
		// cluster (replicas included): served by the meta leader only.
		add(Family{Name: name, Help: help + " Over the whole cluster, replicas included; from the meta leader only.", Labels: accountLabels, Addition: true})
	}
	account("nats_account_used_memory", "JetStream memory the account uses, bytes.")
	account("nats_account_used_storage", "JetStream file store the account uses, bytes.")
	account("nats_account_api_errors", "JetStream API errors of the account.")
	limit := func(name, help string) {
		add(Family{Name: name, Help: help + " From the account's JWT (spec.auth.mode jwt), on the meta leader only; absent when unlimited.", Labels: accountLabels, Addition: true})
	}
	limit(FamilyAccountMaxMemory, "JetStream memory the account may use over the whole cluster, bytes.")
	limit(FamilyAccountMaxStorage, "JetStream file store the account may use over the whole cluster, replicas included, bytes.")

	stream := func(name, help string, addition bool) {
		add(Family{Name: name, Help: help + " From the stream's leader only.", Labels: streamLabels, Addition: addition})
	}
	stream(FamilyStreamMessages, "Messages in the stream.", false)
	stream("nats_stream_total_bytes", "Bytes in the stream.", false)
	stream("nats_stream_first_seq", "First sequence in the stream.", false)
	stream("nats_stream_last_seq", "Last sequence in the stream.", false)
	stream("nats_stream_consumer_count", "Consumers of the stream.", false)
	stream("nats_stream_subject_count", "Distinct subjects in the stream.", true)
	add(Family{Name: FamilyStreamReplica, Help: "From the stream's leader: 1 when a follower replica is current, 0 when it is not.", Labels: withLabel(streamLabels, "replica"), Addition: true})
	add(Family{Name: FamilyStreamReplicaLag, Help: "From the stream's leader: Raft entries a follower replica lags behind.", Labels: withLabel(streamLabels, "replica"), Addition: true})
	add(Family{Name: "nats_stream_mirror_lag", Help: "From the stream's leader: messages the mirror lags behind its origin.", Labels: withLabel(streamLabels, "mirror_name"), Addition: true})
	add(Family{Name: "nats_stream_source_lag", Help: "From the stream's leader: messages the stream lags behind one of its sources.", Labels: withLabel(streamLabels, "source_name"), Addition: true})
	add(Family{Name: FamilyStreamNoLeader, Help: "1 from every server that holds a replica of a clustered stream and sees no leader for it: aggregate with max by stream_name.", Labels: join([]string{"server_id", "server_name", "cluster", "account", "stream_name"}, tail), Addition: true})

	consumer := func(name, help string) {
		add(Family{Name: name, Help: help + " From the consumer's leader only.", Labels: consumerLabels})
	}
	consumer("nats_consumer_delivered_consumer_seq", "Last consumer sequence delivered.")
	consumer("nats_consumer_delivered_stream_seq", "Stream sequence of the last message delivered.")
	consumer("nats_consumer_num_ack_pending", "Messages delivered and not acknowledged yet.")
	consumer("nats_consumer_num_redelivered", "Messages redelivered.")
	consumer("nats_consumer_num_waiting", "Pull requests waiting.")
	consumer(FamilyConsumerPending, "Messages not delivered yet.")
	consumer("nats_consumer_ack_floor_stream_seq", "Stream sequence under which every message is acknowledged.")
	consumer("nats_consumer_ack_floor_consumer_seq", "Consumer sequence under which every message is acknowledged.")
	add(Family{Name: FamilyConsumerReplica, Help: "From the consumer's leader: 1 when a follower replica is current, 0 when it is not.", Labels: withLabel(consumerLabels, "replica"), Addition: true})
	add(Family{Name: FamilyConsumerReplicaLag, Help: "From the consumer's leader: Raft entries a follower replica lags behind.", Labels: withLabel(consumerLabels, "replica"), Addition: true})
	return out
}

// Families are every family the exporter serves, in a fixed order. The
// collector describes exactly these, and the dashboard and alert tests
// accept no other name of the exporter's.
func Families() []Family {
	out := make([]Family, len(families))
	for i, f := range families {
		out[i] = f
		out[i].Labels = slices.Clone(f.Labels)
	}
	return out
}

// family looks a family up by name; unknown names are a programming error.
func family(name string) *Family {
	for i := range families {
		if families[i].Name == name {
			return &families[i]
		}
	}
	panic("exporter: no family " + name)
}
