package natsmon

import (
	"reflect"
	"testing"
)

func TestMetaMembersAreTheLeadersView(t *testing.T) {
	views := map[string]*JSInfo{
		// A follower still thinks n-3 is fine; the leader knows better.
		"n-1": view("n-0", []Peer{peer("n-0", true, false), peer("n-3", true, false)}, nil, nil),
		"n-0": view("n-0", []Peer{peer("n-1", true, false), peer("n-3", false, true)}, nil, nil),
	}
	members, ok := MetaMembers(views)
	if !ok || len(members) != 2 {
		t.Fatalf("MetaMembers = %v, %v; want the leader's two peers", members, ok)
	}
	if members[1].Name != "n-3" || !members[1].Offline {
		t.Fatalf("n-3 as the leader sees it: %+v, want offline", members[1])
	}
}

func TestMetaMembersWithoutTheLeadersView(t *testing.T) {
	// The leader did not answer: a follower's view is no ground to remove
	// anyone.
	views := map[string]*JSInfo{"n-1": view("n-0", []Peer{peer("n-3", false, true)}, nil, nil), "n-0": nil}
	if members, ok := MetaMembers(views); ok {
		t.Fatalf("MetaMembers = %v without the leader's view, want not ok", members)
	}
}

func TestPlacementsMergeTheViewsOfEveryHost(t *testing.T) {
	r3 := &Group{Leader: "n-0", Replicas: []Peer{peer("n-1", true, false), peer("n-4", true, false)}}
	moving := &Group{Leader: "n-4", Moving: true}
	detail := func(streams ...Stream) *JSInfo {
		return &JSInfo{Accounts: []Account{{Name: "APP", Streams: streams}}}
	}
	views := map[string]*JSInfo{
		"n-0": detail(Stream{Name: "ORDERS", Cluster: r3, Replicas: 3,
			Consumers: []Consumer{{Name: "W", Cluster: &Group{Leader: "n-0", Replicas: []Peer{peer("n-4", true, false)}},
				Replicas: 2}}}),
		// An R1 stream only its host reports, on its way elsewhere.
		"n-4": detail(Stream{Name: "LOG", Cluster: moving}),
		"n-1": nil,
	}
	got := Placements(views)
	want := []Placement{
		{Name: "consumer W of stream ORDERS", Replicas: 2, Peers: []string{"n-0", "n-4"}},
		{Name: "stream LOG", Replicas: 1, Peers: []string{"n-4"}, Moving: true},
		{Name: "stream ORDERS", Replicas: 3, Peers: []string{"n-0", "n-1", "n-4"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Placements = %+v, want %+v", got, want)
	}
}
