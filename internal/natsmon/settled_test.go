package natsmon

import (
	"strings"
	"testing"
	"time"
)

func peer(name string, current, offline bool) Peer {
	p := Peer{Name: name, Current: current, Offline: offline}
	if !current {
		p.Lag, p.Active = 5000, 10*time.Second
	}
	return p
}

// view is a server's /jsz with the meta group led by leader and one R3
// stream with a consumer.
func view(leader string, meta []Peer, stream, consumer *Group) *JSInfo {
	st := Stream{Name: "ORDERS", Cluster: stream}
	if consumer != nil {
		st.Consumers = []Consumer{{Name: "worker", Cluster: consumer}}
	}
	return &JSInfo{
		Meta:     &MetaGroup{Leader: leader, Replicas: meta},
		Accounts: []Account{{Name: "APP", Streams: []Stream{st}}},
	}
}

func TestUnsettled(t *testing.T) {
	good := []Peer{peer("n-1", true, false), peer("n-2", true, false)}
	group := func(leader string, replicas ...Peer) *Group {
		return &Group{Leader: leader, Replicas: replicas}
	}
	for _, tc := range []struct {
		name  string
		views map[string]*JSInfo
		want  string // substring; "" means settled
	}{
		{"all current", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-1", peer("n-0", true, false), peer("n-2", true, false)), group("n-2", peer("n-0", true, false))),
			"n-1": view("n-0", nil, nil, nil),
		}, ""},
		{"a server did not answer", map[string]*JSInfo{"n-0": view("n-0", good, nil, nil), "n-1": nil}, "server n-1 did not answer"},
		{"no meta leader", map[string]*JSInfo{"n-0": view("", nil, nil, nil)}, "meta group has no leader"},
		{"meta follower behind", map[string]*JSInfo{
			"n-0": view("n-0", []Peer{peer("n-1", false, false)}, nil, nil),
		}, "the meta group: replica n-1 is not current"},
		{"meta follower offline", map[string]*JSInfo{
			"n-0": view("n-0", []Peer{peer("n-2", true, true)}, nil, nil),
		}, "replica n-2 is offline"},
		{"only the leader's view of the meta peers counts", map[string]*JSInfo{
			"n-1": view("n-0", []Peer{peer("n-2", false, false)}, nil, nil),
		}, ""},
		{"stream without leader", map[string]*JSInfo{"n-0": view("n-0", good, group(""), nil)}, "stream ORDERS has no leader"},
		{"stream replica behind", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-0", peer("n-1", false, false)), nil),
		}, "stream ORDERS: replica n-1 is not current"},
		{"consumer without leader", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-0"), group("")),
		}, "consumer worker of stream ORDERS has no leader"},
		{"a follower a few entries behind under load is current", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-0", Peer{Name: "n-1", Lag: 3, Active: 50 * time.Millisecond}), nil),
		}, ""},
		{"a follower far behind is not", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-0", Peer{Name: "n-1", Lag: 101, Active: 50 * time.Millisecond}), nil),
		}, "replica n-1 is not current (101 entries behind"},
		{"a follower not heard from is not", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-0", Peer{Name: "n-1", Lag: 1, Active: 3 * time.Second}), nil),
		}, "replica n-1 is not current"},
		{"consumer replica offline", map[string]*JSInfo{
			"n-0": view("n-0", good, group("n-0"), group("n-1", peer("n-2", false, true))),
		}, "consumer worker of stream ORDERS: replica n-2 is offline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Unsettled(tc.views)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Unsettled = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMetaLeader(t *testing.T) {
	views := map[string]*JSInfo{"a": nil, "b": {Meta: &MetaGroup{Leader: "n-2"}}}
	if got := MetaLeader(views); got != "n-2" {
		t.Fatalf("MetaLeader = %q, want n-2", got)
	}
	if got := MetaLeader(map[string]*JSInfo{"a": {}}); got != "" {
		t.Fatalf("MetaLeader without a meta group = %q, want empty", got)
	}
}
