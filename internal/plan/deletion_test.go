package plan

import (
	"strings"
	"testing"
)

// TestDeletion: what holds a deleted NatsCluster. Careless variants
// caught: a guard that ignores the annotation (nothing could ever delete
// a cluster with data), one that lets unreadable servers go (messages
// lost because a server did not answer), one that holds a cluster whose
// namespace is going (the namespace would never finish).
func TestDeletion(t *testing.T) {
	data := []StreamHolding{{Account: "APP", Stream: "ORDERS", Messages: 7}}
	for _, tc := range []struct {
		name    string
		o       DeletionObservation
		release bool
		reason  string
		say     string
	}{
		{"empty streams", DeletionObservation{ServersRunning: true, Read: true}, true, "", ""},
		{"messages", DeletionObservation{ServersRunning: true, Read: true, Streams: data}, false, ReasonDeletionHeldByData, "APP/ORDERS: 7"},
		{"messages, allowed", DeletionObservation{Allowed: true, ServersRunning: true, Read: true, Streams: data}, true, "", ""},
		{"messages, namespace going", DeletionObservation{NamespaceGoing: true, ServersRunning: true, Read: true, Streams: data}, true, "", ""},
		{"not read", DeletionObservation{ServersRunning: true}, false, ReasonDeletionUnread, "cannot be read"},
		{"no server running", DeletionObservation{}, true, "", ""},
		{"used by another namespace", DeletionObservation{Users: []string{"team-a/Stream/orders"}}, false, ReasonDeletionHeldByUsers, "team-a/Stream/orders"},
	} {
		v := Deletion(tc.o)
		if v.Release != tc.release || v.Reason != tc.reason || !strings.Contains(v.Message, tc.say) {
			t.Errorf("%s: %+v, want release %v reason %q saying %q", tc.name, v, tc.release, tc.reason, tc.say)
		}
	}
	many := DeletionObservation{Users: []string{"a", "b", "c", "d", "e", "f", "g"}}
	if v := Deletion(many); !strings.Contains(v.Message, "and 2 more") {
		t.Errorf("seven users: %s", v.Message)
	}
}
