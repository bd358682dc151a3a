package natsmon

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestDecodeJSZReadsWhatNatsServerWrites marshals nats-server's own JSInfo
// (with every kind of field the decoder skips around: times, nested
// configs, state) and checks the operator's view of it field by field, so
// that the JSON names in jsz_decode.go cannot drift from the server's.
func TestDecodeJSZReadsWhatNatsServerWrites(t *testing.T) {
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	peers := []*server.PeerInfo{
		{Name: "n-1", Current: true, Active: 120 * time.Millisecond, Peer: "abc"},
		{Name: "n-2", Offline: true, Active: 9 * time.Second, Lag: 4211},
	}
	in := server.JSInfo{
		ID: "NSERVER", Now: since, Streams: 1, Consumers: 1,
		Config: server.JetStreamConfig{MaxStore: 1 << 30, StoreDir: "/data"},
		Meta:   &server.MetaClusterInfo{Name: "nats", Leader: "n-0", Peer: "xyz", Replicas: peers, Size: 3},
		AccountDetails: []*server.AccountDetail{{Name: "APP", Id: "APP", Streams: []server.StreamDetail{{
			Name: "ORDERS", Created: since,
			Cluster: &server.ClusterInfo{Name: "nats", Leader: "n-0", LeaderSince: &since, Replicas: peers,
				Desired: &server.DesiredClusterInfo{Created: since, Name: "x"}},
			Config: &server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3, Storage: server.FileStorage,
				Discard: server.DiscardNew, AllowMsgSchedules: true, Metadata: map[string]string{"a": "b", "_nats.req.level": "2"}},
			State: server.StreamState{Msgs: 10, FirstTime: since},
			Consumer: []*server.ConsumerInfo{{Stream: "ORDERS", Name: "W\u00e9",
				Config:  &server.ConsumerConfig{Durable: "W", Replicas: 2, FilterSubjects: []string{"a", "b"}, Metadata: map[string]string{"_nats.req.level": "4"}},
				Cluster: &server.ClusterInfo{Leader: "n-1", Replicas: peers[:1]}}},
		}}}},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeJSZ(strings.NewReader(string(raw)), "/jsz")
	if err != nil {
		t.Fatalf("DecodeJSZ: %v\n%s", err, raw)
	}
	wantPeers := []Peer{
		{Name: "n-1", Current: true, Active: 120 * time.Millisecond},
		{Name: "n-2", Offline: true, Active: 9 * time.Second, Lag: 4211},
	}
	want := &JSInfo{
		Meta: &MetaGroup{Leader: "n-0", Replicas: wantPeers},
		Accounts: []Account{{Name: "APP", Streams: []Stream{{
			Name: "ORDERS", Replicas: 3, Messages: 10, RequiredLevel: 2, DiscardNewSchedules: true,
			Cluster: &Group{Leader: "n-0", Replicas: wantPeers, Moving: true},
			Consumers: []Consumer{{Name: "W\u00e9", Replicas: 2, RequiredLevel: 4,
				Cluster: &Group{Leader: "n-1", Replicas: wantPeers[:1]}}},
		}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeJSZ =\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeSystemJSZ(t *testing.T) {
	raw := `{"server":{"name":"n-1","host":"0.0.0.0","id":"N","ver":"2.15.3","seq":4,"time":"2026-12-01T10:00:00Z"},` +
		`"data":{"server_id":"N","meta_cluster":{"leader":"n-0","replicas":[{"name":"n-2","current":true,"active":1000}]}}}`
	name, view, err := DecodeSystemJSZ([]byte(raw))
	if err != nil || name != "n-1" || view == nil || view.Meta == nil || view.Meta.Leader != "n-0" ||
		!reflect.DeepEqual(view.Meta.Replicas, []Peer{{Name: "n-2", Current: true, Active: time.Microsecond}}) {
		t.Fatalf("DecodeSystemJSZ = %q, %+v, %v", name, view, err)
	}
	// An error answer has no data: no view, no error.
	name, view, err = DecodeSystemJSZ([]byte(`{"server":{"name":"n-1"},"error":{"code":500,"description":"x"}}`))
	if err != nil || name != "n-1" || view != nil {
		t.Fatalf("DecodeSystemJSZ of an error answer = %q, %+v, %v", name, view, err)
	}
}

// TestDecodeJSZRefuses lists the bodies a view is refused for, each with
// the words its error must carry.
func TestDecodeJSZRefuses(t *testing.T) {
	repeat := func(elem string, n int) string { return strings.TrimSuffix(strings.Repeat(elem+",", n), ",") }
	streams := func(n int, elem string) string {
		return `{"account_details":[{"name":"A","stream_detail":[` + repeat(elem, n) + `]}]}`
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"too many streams", streams(maxJSZStreams+1, "{}"), "lists more than 4096 streams"},
		{"too many streams over accounts", `{"account_details":[` +
			repeat(`{"stream_detail":[`+repeat("{}", maxJSZStreams/2)+`]}`, 3) + `]}`, "lists more than 4096 streams"},
		{"a repeated key does not reset the count", `{"account_details":[{"stream_detail":[` + repeat("{}", maxJSZStreams) +
			`],"stream_detail":[{}]}]}`, "lists more than 4096 streams"},
		{"too many accounts", `{"account_details":[` + repeat("{}", maxJSZAccounts+1) + `]}`, "lists more than 1024 accounts"},
		{"too many consumers", streams(1, `{"consumer_detail":[`+repeat("{}", maxJSZConsumers+1)+`]}`), "lists more than 16384 consumers"},
		{"too many replicas in a group", `{"meta_cluster":{"replicas":[` + repeat("{}", maxGroupReplicas+1) + `]}}`, "lists more than 128 replicas in one group"},
		{"too many replicas over groups", streams(maxJSZStreams, `{"cluster":{"replicas":[`+repeat("{}", 40)+`]}}`), "replicas over all groups"},
		{"deep nesting in a skipped field", `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, "nests deeper than 32 levels"},
		{"deep nesting of objects", `{"x":` + strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40) + `}`, "nests deeper than 32 levels"},
		{"a long name", streams(1, `{"name":"`+strings.Repeat("a", maxNameLen+1)+`"}`), "stream name longer than 256 bytes"},
		{"a long number", `{"x":` + strings.Repeat("1", 100) + `}`, "number longer than"},
		{"a fraction for a count", streams(1, `{"config":{"num_replicas":1.5}}`), `"1.5" where an integer`},
		{"an API level that is no number", streams(1, `{"config":{"metadata":{"_nats.req.level":"x"}}}`), `records API level "x"`},
		{"an API level out of range", streams(1, `{"config":{"metadata":{"_nats.req.level":"1000000"}}}`), `records API level "1000000"`},
		{"replicas out of range", streams(1, `{"config":{"num_replicas":100000}}`), "states 100000 replicas"},
		{"a string for a bool", `{"meta_cluster":{"replicas":[{"current":"yes"}]}}`, "true or false"},
		{"a truncated body", `{"meta_cluster":{"leader":"n-0"`, "ends in the middle"},
		{"trailing bytes", `{} {}`, "has more after its end"},
		{"not JSON", `<html>`, "is not valid JSON"},
		{"a control character", "{\"x\":\"a\x01\"}", "control character"},
		{"a bad escape", `{"x":"\q"}`, "is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeJSZ(strings.NewReader(tc.body), "/jsz")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeJSZ = %v, want an error with %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "the server's /jsz ") {
				t.Fatalf("error %q does not say what it is about", err)
			}
		})
	}
}

// TestDecodeJSZAtTheLimits: a view exactly at every limit is read.
func TestDecodeJSZAtTheLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"account_details":[{"name":"A","stream_detail":[`)
	for i := range maxJSZStreams {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"S","cluster":{"leader":"n-0","replicas":[{"name":"n-1"},{"name":"n-2"}]},"consumer_detail":[`)
		b.WriteString(strings.TrimSuffix(strings.Repeat(`{"name":"C","cluster":{"replicas":[{"name":"n-1"}]}},`, 4), ","))
		b.WriteString(`]}`)
	}
	b.WriteString(`]}]}`)
	got, err := DecodeJSZ(strings.NewReader(b.String()), "/jsz")
	if err != nil {
		t.Fatalf("DecodeJSZ at the limits: %v", err)
	}
	if n := len(got.Accounts[0].Streams); n != maxJSZStreams {
		t.Fatalf("%d streams, want %d", n, maxJSZStreams)
	}
}

func TestJSONReaderSkipsEveryKindOfValue(t *testing.T) {
	body := `{"a":[1,-2.5e3,true,false,null,"s\"\\\/\b\f\n\r\t\u00e9\ud83d"],"b":{"c":{}},"d":[[],[{}]],"meta_cluster":{"leader":"\u006e-0"}}`
	if !json.Valid([]byte(body)) {
		t.Fatal("the test body is not JSON")
	}
	got, err := DecodeJSZ(strings.NewReader(" \n"+body+"\n "), "/jsz")
	if err != nil || got.Meta == nil || got.Meta.Leader != "n-0" {
		t.Fatalf("DecodeJSZ = %+v, %v", got, err)
	}
}

func TestJSONReaderNulls(t *testing.T) {
	got, err := DecodeJSZ(strings.NewReader(`{"meta_cluster":null,"account_details":null}`), "/jsz")
	if err != nil || got.Meta != nil || got.Accounts != nil {
		t.Fatalf("DecodeJSZ of nulls = %+v, %v", got, err)
	}
	got, err = DecodeJSZ(strings.NewReader(`{"account_details":[{"stream_detail":[{"cluster":null,"config":null,"name":null}]}]}`), "/jsz")
	if err != nil || got.Accounts[0].Streams[0].Cluster != nil {
		t.Fatalf("DecodeJSZ of null fields = %+v, %v", got, err)
	}
}

// FuzzDecodeJSZ: whatever the reader accepts is JSON (it is no kinder
// than encoding/json), and it never panics.
func FuzzDecodeJSZ(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"meta_cluster":{"leader":"n-0","replicas":[{"name":"n-1","current":true,"active":5,"lag":1}]}}`,
		`{"account_details":[{"name":"A","stream_detail":[{"name":"S","config":{"num_replicas":3},"cluster":{"desired":{}},"consumer_detail":[{}]}]}]}`,
		`{"a":"\u00e9\ud800"}`, `{"a":[[[[1]]]]}`, `[]`, `{"a":1}x`, `{"a":01}`, `{"a":-}`, `{"a":1e}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := DecodeJSZ(strings.NewReader(string(body)), "/jsz"); err == nil && !json.Valid(body) {
			t.Fatalf("DecodeJSZ accepted what is not JSON: %q", body)
		}
	})
}
