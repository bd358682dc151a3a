package exporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestStreamAndConsumerSeriesOnceFromTheLeader: over the three servers of
// an R3 stream, each stream and consumer series shows once, with the
// leader's values. Careless variant watched failing: serving every
// replica's view (drop the isLeader checks in streamSamples) gives three
// nats_stream_total_messages series for ORDERS (30 messages by sum) and
// two followers' nats_consumer_num_pending of 0 beside the leader's 6.
func TestStreamAndConsumerSeriesOnceFromTheLeader(t *testing.T) {
	all := clusterSamples(t)
	for _, tc := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{FamilyStreamMessages, map[string]string{"stream_name": capturedStream}, capturedPublished},
		{"nats_stream_last_seq", map[string]string{"stream_name": capturedStream}, capturedPublished},
		{"nats_stream_consumer_count", map[string]string{"stream_name": capturedStream}, 1},
		{FamilyStreamMessages, map[string]string{"stream_name": capturedMirror}, capturedPublished},
		{FamilyConsumerPending, map[string]string{"stream_name": capturedStream, "consumer_name": capturedConsumer}, capturedPublished - capturedFetched},
		{"nats_consumer_num_ack_pending", map[string]string{"consumer_name": capturedConsumer}, capturedFetched - capturedAcked},
		{"nats_consumer_ack_floor_stream_seq", map[string]string{"consumer_name": capturedConsumer}, capturedAcked},
		{"nats_consumer_delivered_stream_seq", map[string]string{"consumer_name": capturedConsumer}, capturedFetched},
	} {
		t.Run(tc.family+mustJSON(t, tc.labels), func(t *testing.T) {
			got := find(all, tc.family, tc.labels)
			if len(got) != 1 {
				t.Fatalf("%d series, want exactly one: %+v", len(got), got)
			}
			if got[0].Value != tc.want {
				t.Fatalf("value %v, want %v", got[0].Value, tc.want)
			}
			l := labelsOf(got[0])
			if l["is_stream_leader"] != "true" || l["server_name"] != l["stream_leader"] && tc.labels["consumer_name"] == "" {
				t.Fatalf("served by %s, not the stream's leader %s", l["server_name"], l["stream_leader"])
			}
		})
	}
}

// TestServerIDIsTheServerName: server_id carries the server's name, which
// survives a restart, never the id nats-server makes at every start.
// Careless variant watched failing: taking /varz's server_id (as the
// exporter does) puts "NDDX..." in server_id, which a restart changes.
func TestServerIDIsTheServerName(t *testing.T) {
	for _, s := range capturedServers {
		// The capture's own id, read with encoding/json: the exporter's
		// reader does not keep it.
		var v struct {
			ServerID string `json:"server_id"`
		}
		raw, err := os.ReadFile(filepath.Join("testdata", s+"-varz.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &v); err != nil || v.ServerID == "" {
			t.Fatalf("the capture's server_id: %v", err)
		}
		var varz Varz
		load(t, s, "varz", &varz)
		var z JSZ
		load(t, s, "jsz", &z)
		server, groups := JSZSamples(identity(s), z)
		kept, _ := Bound(groups, 1<<20)
		samples := append(append(VarzSamples(identity(s), varz), server...), kept...)
		for _, sm := range samples {
			l := labelsOf(sm)
			if l["server_id"] != s || l["server_name"] != s {
				t.Fatalf("%s: server_id %q, server_name %q, want both %q", sm.Name, l["server_id"], l["server_name"], s)
			}
			for _, v2 := range sm.Labels {
				if v2 == v.ServerID {
					t.Fatalf("%s carries the per-start server id %s", sm.Name, v.ServerID)
				}
			}
			if l["namespace"] != "team-a" || l["natscluster"] != "orders" {
				t.Fatalf("%s: namespace %q natscluster %q", sm.Name, l["namespace"], l["natscluster"])
			}
		}
	}
}

// TestReplicaCurrencyFromTheLeader: replica currency and lag come from the
// leader's view, where both followers are current; a follower's view
// (c-0 sees c-2 as not current) is not served. Careless variant watched
// failing: serving replicas from every server gives four series for
// ORDERS, one of them 0.
func TestReplicaCurrencyFromTheLeader(t *testing.T) {
	all := clusterSamples(t)
	got := find(all, FamilyStreamReplica, map[string]string{"stream_name": capturedStream})
	if len(got) != 2 {
		t.Fatalf("%d replica series, want the leader's two followers: %+v", len(got), got)
	}
	for _, s := range got {
		l := labelsOf(s)
		if l["server_name"] != "c-1" || s.Value != 1 || l["replica"] == "c-1" {
			t.Fatalf("replica series %v = %v, want from c-1 about a follower, current", l, s.Value)
		}
	}
	if n := len(find(all, FamilyStreamReplicaLag, map[string]string{"stream_name": capturedStream})); n != 2 {
		t.Fatalf("%d lag series, want 2", n)
	}
	if n := len(find(all, "nats_server_meta_replica_current", nil)); n != 2 {
		t.Fatalf("%d meta replica series, want the meta leader's two followers", n)
	}
	if got := find(all, "nats_stream_mirror_lag", map[string]string{"stream_name": capturedMirror, "mirror_name": capturedStream}); len(got) != 1 {
		t.Fatalf("mirror lag series: %+v", got)
	}
}

// TestConsumerReplicaCurrencyFromTheLeader: a consumer's replicas, from
// its leader c-1, where both followers are current; c-0 and c-2 each see
// the other as not current, which is not served. Careless variant watched
// failing: reading the replicas of every consumer in the capture, not
// only those this server leads, gives six series, two of them 0.
func TestConsumerReplicaCurrencyFromTheLeader(t *testing.T) {
	all := clusterSamples(t)
	got := find(all, FamilyConsumerReplica, map[string]string{"stream_name": capturedStream, "consumer_name": capturedConsumer})
	if len(got) != 2 {
		t.Fatalf("%d consumer replica series, want the leader's two followers: %+v", len(got), got)
	}
	replicas := map[string]bool{}
	for _, s := range got {
		l := labelsOf(s)
		if l["server_name"] != "c-1" || l["consumer_leader"] != "c-1" || s.Value != 1 {
			t.Fatalf("consumer replica series %v = %v, want from the leader c-1, current", l, s.Value)
		}
		replicas[l["replica"]] = true
	}
	if !replicas["c-0"] || !replicas["c-2"] {
		t.Fatalf("replicas %v, want c-0 and c-2", replicas)
	}
	if n := len(find(all, FamilyConsumerReplicaLag, map[string]string{"consumer_name": capturedConsumer})); n != 2 {
		t.Fatalf("%d consumer lag series, want 2", n)
	}
}

// TestAccountsFromTheMetaLeader: every server reports an account's usage
// over the whole cluster (1560 bytes: ORDERS' 390 three times and the
// mirror's once), so it shows once, from the meta leader. Careless
// variant watched failing: serving it from every server shows three
// series, and a sum by account triples the usage.
func TestAccountsFromTheMetaLeader(t *testing.T) {
	got := find(clusterSamples(t), "nats_account_used_storage", map[string]string{"account": "$G"})
	if len(got) != 1 || got[0].Value != 1560 || labelsOf(got[0])["server_name"] != "c-1" {
		t.Fatalf("account series %+v, want one from the meta leader c-1 of 1560 bytes", got)
	}
}

// TestStreamWithoutLeader: every replica that sees no leader says so, and
// no stream series is served for it (nobody leads it).
func TestStreamWithoutLeader(t *testing.T) {
	var z JSZ
	load(t, "c-0", "jsz", &z)
	for i := range z.Accounts[0].Streams {
		if s := &z.Accounts[0].Streams[i]; s.Name == capturedStream {
			s.Cluster.Leader = ""
		}
	}
	server, groups := JSZSamples(identity("c-0"), z)
	if got := find(server, FamilyStreamNoLeader, map[string]string{"stream_name": capturedStream}); len(got) != 1 || got[0].Value != 1 {
		t.Fatalf("without-leader series %+v", got)
	}
	kept, _ := Bound(groups, 1<<20)
	if got := find(kept, FamilyStreamMessages, map[string]string{"stream_name": capturedStream}); len(got) != 0 {
		t.Fatalf("a leaderless stream's series were served: %+v", got)
	}
}

// TestServerSeries checks the server's JetStream series against c-1's
// /jsz: limits, usage, meta leadership.
func TestServerSeries(t *testing.T) {
	var z JSZ
	load(t, "c-1", "jsz", &z)
	server, _ := JSZSamples(identity("c-1"), z)
	for _, tc := range []struct {
		family string
		want   float64
	}{
		{"nats_server_max_storage", float64(z.Config.MaxStorage)},
		{"nats_server_used_storage", float64(z.Storage)},
		{"nats_server_total_streams", 1},
		{"nats_server_meta_cluster_size", 3},
		{FamilyJetStreamDisabled, 0},
	} {
		got := find(server, tc.family, map[string]string{"is_meta_leader": "true", "meta_leader": "c-1", "cluster": "nats"})
		if len(got) != 1 || got[0].Value != tc.want {
			t.Errorf("%s = %+v, want one series of %v", tc.family, got, tc.want)
		}
	}
}
