package natsmon

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

func TestMetaMembersAreTheLeadersView(t *testing.T) {
	views := map[string]*server.JSInfo{
		// A follower still thinks n-3 is fine; the leader knows better.
		"n-1": view("n-0", []*server.PeerInfo{peer("n-0", true, false), peer("n-3", true, false)}, nil, nil),
		"n-0": view("n-0", []*server.PeerInfo{peer("n-1", true, false), peer("n-3", false, true)}, nil, nil),
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
	views := map[string]*server.JSInfo{"n-1": view("n-0", []*server.PeerInfo{peer("n-3", false, true)}, nil, nil), "n-0": nil}
	if members, ok := MetaMembers(views); ok {
		t.Fatalf("MetaMembers = %v without the leader's view, want not ok", members)
	}
}
