package natscluster

import (
	"sort"
	"testing"

	"github.com/kubenats/kubenats/internal/natsmon"
)

// TestLeaderGroups: each group once, with the followers its leader calls
// current (a follower's own view may be stale), and no group whose name
// cannot be one subject token: the name goes into a step-down request's
// subject, and a server's answer is not trusted to be a JetStream name.
// Careless readings it catches: the first view taken for every group
// (n-1's stale view says n-2 is current), names used as they come ("a.b"
// would step down stream a's consumer b).
func TestLeaderGroups(t *testing.T) {
	group := func(leader string, peers ...natsmon.Peer) *natsmon.Group {
		return &natsmon.Group{Leader: leader, Replicas: peers}
	}
	current := func(n string) natsmon.Peer { return natsmon.Peer{Name: n, Current: true} }
	behind := func(n string) natsmon.Peer { return natsmon.Peer{Name: n} }
	views := map[string]*natsmon.JSInfo{
		"n-0": {Accounts: []natsmon.Account{{Name: "APP", Streams: []natsmon.Stream{
			{Name: "A", Cluster: group("n-0", current("n-1"), behind("n-2")),
				Consumers: []natsmon.Consumer{{Name: "c", Cluster: group("n-1", current("n-0"), current("n-2"))}}},
			{Name: "a.b", Cluster: group("n-0", current("n-1"))},
		}}}},
		"n-1": {Accounts: []natsmon.Account{{Name: "APP", Streams: []natsmon.Stream{
			{Name: "A", Cluster: group("n-0", current("n-1"), current("n-2"))},
		}}}},
	}
	// The views are a map: read in every order Go's iteration gives.
	for range 50 {
		got := leaderGroups(views)
		sort.Slice(got, func(i, j int) bool { return got[i].Consumer < got[j].Consumer })
		if len(got) != 2 {
			t.Fatalf("groups %+v, want A and A/c", got)
		}
		if a := got[0]; a.Stream != "A" || a.Consumer != "" || a.Leader != "n-0" || len(a.Current) != 1 || a.Current[0] != "n-1" {
			t.Fatalf("stream A: %+v, want led by n-0 with n-1 alone current (its leader's view)", a)
		}
		if c := got[1]; c.Consumer != "c" || c.Leader != "n-1" || len(c.Current) != 2 {
			t.Fatalf("consumer A/c: %+v", c)
		}
	}
}
