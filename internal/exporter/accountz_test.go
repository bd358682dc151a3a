package exporter

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecodeAccountzKeepsOnlyTheLimits: the limits are read from
// account_detail.decoded_jwt.nats.limits and nowhere else; an answer
// without claims (a server not in JWT mode) is no limit, not a zero one.
// Careless variant watched failing: matching "mem_storage" at any depth
// reads the limit of an import's activation or a tier as the account's.
func TestDecodeAccountzKeepsOnlyTheLimits(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       AccountLimits
	}{
		{"limits", `{"account_detail":{"jwt":"eyJ...","decoded_jwt":{"name":"APP","nats":{"limits":{"subs":-1,"mem_storage":1024,"disk_storage":4096}}}}}`,
			AccountLimits{Known: true, MaxMemory: 1024, MaxStorage: 4096}},
		{"zero limits left out", `{"account_detail":{"decoded_jwt":{"nats":{"limits":{"disk_storage":-1}}}}}`,
			AccountLimits{Known: true, MaxMemory: 0, MaxStorage: -1}},
		{"limits elsewhere are not the account's", `{"mem_storage":9,"account_detail":{"imports":[{"mem_storage":9}],"decoded_jwt":{"nats":{"tier":{"mem_storage":9},"limits":{"disk_storage":5}}}}}`,
			AccountLimits{Known: true, MaxStorage: 5}},
		{"tiered", `{"account_detail":{"decoded_jwt":{"nats":{"limits":{"tiered_limits":{"R1":{"disk_storage":5}}}}}}}`,
			AccountLimits{}},
		{"no tiers", `{"account_detail":{"decoded_jwt":{"nats":{"limits":{"tiered_limits":null,"disk_storage":5}}}}}`,
			AccountLimits{Known: true, MaxStorage: 5}},
		{"not JWT mode", `{"server_id":"N","account_detail":{"account_name":"$G","jetstream_enabled":true}}`, AccountLimits{}},
		{"null claims", `{"account_detail":{"decoded_jwt":null}}`, AccountLimits{}},
		{"no account", `{"server_id":"N"}`, AccountLimits{}},
	} {
		var got AccountLimits
		if err := Decode(strings.NewReader(c.body), MaxAccountzBody, &got); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	for _, bad := range []string{
		`{"account_detail":{"decoded_jwt":{"nats":{"limits":{"disk_storage":"5"}}}}}`,
		`{"account_detail":{"decoded_jwt":{"nats":{"limits":[]}}}}`,
		`{"account_detail":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`,
		`{"account_detail":{}} {}`,
	} {
		var got AccountLimits
		if err := Decode(strings.NewReader(bad), MaxAccountzBody, &got); err == nil {
			t.Errorf("%.60s decoded: %+v", bad, got)
		}
	}
}

// TestLimitsAreReadOnTheMetaLeaderWithinABound: only the meta leader reads
// limits (every server would serve the same cluster-wide numbers), a
// server that is not clustered reads its own, and past maxLimitReads the
// accounts left out are counted. Careless variant watched failing:
// reading on every server serves each limit three times.
func TestLimitsAreReadOnTheMetaLeaderWithinABound(t *testing.T) {
	accounts := func(n int) []Account {
		out := make([]Account, n)
		for i := range out {
			out[i] = Account{Name: fmt.Sprintf("A%d", i), ID: fmt.Sprintf("ID%d", i)}
		}
		return out
	}
	for _, c := range []struct {
		name          string
		z             JSZ
		read, dropped int
	}{
		{"meta leader", JSZ{Meta: &Raft{Leader: "n-0"}, Accounts: accounts(3)}, 3, 0},
		{"follower", JSZ{Meta: &Raft{Leader: "n-1"}, Accounts: accounts(3)}, 0, 0},
		{"no leader yet", JSZ{Meta: &Raft{}, Accounts: accounts(3)}, 0, 0},
		{"not clustered", JSZ{Accounts: accounts(3)}, 3, 0},
		{"past the bound", JSZ{Meta: &Raft{Leader: "n-0"}, Accounts: accounts(maxLimitReads + 7)}, maxLimitReads, 7},
	} {
		read, dropped := limitReads("n-0", c.z)
		if len(read) != c.read || dropped != c.dropped {
			t.Errorf("%s: read %d dropped %d, want %d and %d", c.name, len(read), dropped, c.read, c.dropped)
		}
	}
	if got := AccountzPath(Account{Name: "APP", ID: "AB+C"}); got != "/accountz?acc=AB%2BC" {
		t.Errorf("path %s: /accountz knows an account by its id, escaped", got)
	}
}
