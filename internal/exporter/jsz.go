package exporter

// StreamGroup is the series of one stream and its consumers: the unit the
// cardinality bound keeps or drops whole, so that a stream never shows
// without the consumers it has or the other way round.
type StreamGroup struct {
	Account string
	Stream  string
	Samples []Sample
}

// JSZSamples are the JetStream series of one server's /jsz: the server's
// own, the accounts' (from the meta leader), and per stream and consumer
// those this server leads. A follower's view of a stream is the leader's
// a moment ago at best (a follower reports num_pending 0 for a consumer
// whose leader says 6): only the leader's view is served, so each stream
// and consumer shows once, whatever its replica count.
func JSZSamples(id Identity, z JSZ) ([]Sample, []StreamGroup) {
	cluster, metaLeader, isMetaLeader := "", "", true
	if z.Meta != nil {
		cluster, metaLeader = z.Meta.Name, z.Meta.Leader
		isMetaLeader = metaLeader == id.Server
	}
	domain := z.Config.Domain
	js := []string{id.Server, id.Server, cluster, domain, metaLeader, boolLabel(isMetaLeader), id.Namespace, id.NatsCluster}
	at := func(name string, labels []string, v float64) Sample {
		return Sample{Name: name, Labels: labels, Value: v}
	}
	server := []Sample{
		at(FamilyJetStreamDisabled, js, boolValue(z.Disabled)),
		at("nats_server_total_streams", js, float64(z.Streams)),
		at("nats_server_total_consumers", js, float64(z.Consumers)),
		at("nats_server_total_messages", js, float64(z.Messages)),
		at("nats_server_total_message_bytes", js, float64(z.Bytes)),
		at("nats_server_max_memory", js, float64(z.Config.MaxMemory)),
		at("nats_server_max_storage", js, float64(z.Config.MaxStorage)),
		at("nats_server_used_memory", js, float64(z.Memory)),
		at("nats_server_used_storage", js, float64(z.Storage)),
		at("nats_server_api_total", js, float64(z.API.Total)),
		at("nats_server_api_errors", js, float64(z.API.Errors)),
	}
	if z.Meta != nil {
		server = append(server, at("nats_server_meta_cluster_size", js, float64(z.Meta.ClusterSize)))
		if isMetaLeader {
			for _, r := range z.Meta.Replicas {
				l := insert(js, r.Name)
				server = append(server,
					at("nats_server_meta_replica_current", l, boolValue(r.Current && !r.Offline)),
					at("nats_server_meta_replica_lag", l, float64(r.Lag)))
			}
		}
	}
	var groups []StreamGroup
	for _, a := range z.Accounts {
		if isMetaLeader {
			l := accountLabelValues(id, z, a)
			server = append(server,
				at("nats_account_used_memory", l, float64(a.Memory)),
				at("nats_account_used_storage", l, float64(a.Storage)),
				at("nats_account_api_errors", l, float64(a.API.Errors)))
		}
		for _, s := range a.Streams {
			if s.Cluster != nil && s.Cluster.Leader == "" {
				server = append(server, at(FamilyStreamNoLeader,
					[]string{id.Server, id.Server, cluster, a.Name, s.Name, id.Namespace, id.NatsCluster}, 1))
			}
			g := StreamGroup{Account: a.Name, Stream: s.Name}
			g.Samples = streamSamples(id, js, a, s)
			if len(g.Samples) > 0 {
				groups = append(groups, g)
			}
		}
	}
	return server, groups
}

// accountLabelValues are the labels of account a's series in /jsz z.
func accountLabelValues(id Identity, z JSZ, a Account) []string {
	cluster := ""
	if z.Meta != nil {
		cluster = z.Meta.Name
	}
	return []string{id.Server, id.Server, cluster, z.Config.Domain, a.Name, a.ID, id.Namespace, id.NatsCluster}
}

// leads reports whether server leads the Raft group g; a group of nil is
// a stream or consumer of a server that is not clustered, which it leads.
func leads(server string, g *Raft) (leader string, ok bool) {
	if g == nil {
		return server, true
	}
	return g.Leader, g.Leader == server
}

// streamSamples are the series of stream s and of the consumers this
// server leads, with js the server's JetStream labels.
func streamSamples(id Identity, js []string, a Account, s Stream) []Sample {
	head, own := js[:len(js)-len(tail)], js[len(js)-len(tail):]
	streamLeader, isLeader := leads(id.Server, s.Cluster)
	var out []Sample
	sl := join(head, []string{a.Name, a.ID, s.Name, streamLeader, boolLabel(isLeader)}, own)
	if isLeader {
		st := s.State
		for _, v := range []struct {
			name  string
			value float64
		}{
			{FamilyStreamMessages, float64(st.Messages)},
			{"nats_stream_total_bytes", float64(st.Bytes)},
			{"nats_stream_first_seq", float64(st.FirstSeq)},
			{"nats_stream_last_seq", float64(st.LastSeq)},
			{"nats_stream_consumer_count", float64(st.ConsumerCount)},
			{"nats_stream_subject_count", float64(st.NumSubjects)},
		} {
			out = append(out, Sample{Name: v.name, Labels: sl, Value: v.value})
		}
		out = append(out, replicaSamples(FamilyStreamReplica, FamilyStreamReplicaLag, sl, s.Cluster)...)
		if m := s.Mirror; m != nil {
			out = append(out, Sample{Name: "nats_stream_mirror_lag", Labels: insert(sl, m.Name), Value: float64(m.Lag)})
		}
		for _, src := range s.Sources {
			out = append(out, Sample{Name: "nats_stream_source_lag", Labels: insert(sl, src.Name), Value: float64(src.Lag)})
		}
	}
	for _, c := range s.Consumers {
		consumerLeader, leadsConsumer := leads(id.Server, c.Cluster)
		if !leadsConsumer {
			continue
		}
		cl := join(sl[:len(sl)-len(tail)], []string{c.Name, consumerLeader, "true"}, own)
		for _, v := range []struct {
			name  string
			value float64
		}{
			{"nats_consumer_delivered_consumer_seq", float64(c.Delivered.Consumer)},
			{"nats_consumer_delivered_stream_seq", float64(c.Delivered.Stream)},
			{"nats_consumer_num_ack_pending", float64(c.NumAckPending)},
			{"nats_consumer_num_redelivered", float64(c.NumRedelivered)},
			{"nats_consumer_num_waiting", float64(c.NumWaiting)},
			{FamilyConsumerPending, float64(c.NumPending)},
			{"nats_consumer_ack_floor_stream_seq", float64(c.AckFloor.Stream)},
			{"nats_consumer_ack_floor_consumer_seq", float64(c.AckFloor.Consumer)},
		} {
			out = append(out, Sample{Name: v.name, Labels: cl, Value: v.value})
		}
		out = append(out, replicaSamples(FamilyConsumerReplica, FamilyConsumerReplicaLag, cl, c.Cluster)...)
	}
	return out
}

// replicaSamples are the currency and lag of each follower of Raft group
// g (none when not clustered), as its leader sees them, labelled with
// labels and the replica's name.
func replicaSamples(current, lag string, labels []string, g *Raft) []Sample {
	if g == nil {
		return nil
	}
	out := make([]Sample, 0, 2*len(g.Replicas))
	for _, r := range g.Replicas {
		l := insert(labels, r.Name)
		out = append(out,
			Sample{Name: current, Labels: l, Value: boolValue(r.Current && !r.Offline)},
			Sample{Name: lag, Labels: l, Value: float64(r.Lag)})
	}
	return out
}

// insert is labels with one more value before the namespace and
// natscluster tail, as withLabel adds its name.
func insert(labels []string, value string) []string {
	head := labels[:len(labels)-len(tail)]
	return join(head, []string{value}, labels[len(labels)-len(tail):])
}
