package natscluster

import (
	"reflect"
	"testing"

	"github.com/kubenats/kubenats/internal/natsmon"
)

// Only the accounts of replicated streams have Raft groups on a server
// besides the meta group's: those, and no others, are asked for /raftz,
// once each. Careless variant, run: every account of the view (an R1-only
// account is asked about for nothing: one request more per server and
// pass).
func TestReplicatedAccounts(t *testing.T) {
	views := map[string]*natsmon.JSInfo{
		"nats-0": {Accounts: []natsmon.Account{
			{Name: "TEAM_B", Streams: []natsmon.Stream{{Name: "A", Replicas: 1}, {Name: "B", Replicas: 3}, {Name: "C", Replicas: 3}}},
			{Name: "ONES", Streams: []natsmon.Stream{{Name: "X", Replicas: 1}}},
			{Name: "APP", Streams: []natsmon.Stream{{Name: "U", Replicas: 3}}},
		}},
		"nats-1": {},
		"nats-2": nil, // did not answer
	}
	want := map[string][]string{"nats-0": {"APP", "TEAM_B"}}
	if got := replicatedAccounts(views); !reflect.DeepEqual(got, want) {
		t.Fatalf("replicatedAccounts = %v, want %v", got, want)
	}
}
