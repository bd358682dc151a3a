package natsmon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// raftzBody is nats-server's own /raftz JSON for groups of one account.
func raftzBody(t *testing.T, groups map[string]server.RaftzGroup) string {
	t.Helper()
	b, err := json.Marshal(server.RaftzStatus{"APP": groups})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The figures of the first case are a follower's 0.1 s after SIGCONT,
// with 300 MiB to take: its /healthz said ok and its leader counted it
// current. Careless variants, run: catching_up not read (the group
// catching up reads current); no margin for the entries in flight (a
// follower under steady publishing reads behind, and a rollout under load
// would wait on it for good).
func TestDecodeApplyBacklog(t *testing.T) {
	long := strings.Repeat("G", 300)
	for _, tc := range []struct {
		name   string
		groups map[string]server.RaftzGroup
		body   string // instead of groups
		want   string // "" means nothing behind
		err    string
	}{
		{"a resumed follower that stored everything and applied little", map[string]server.RaftzGroup{
			"S-R3F-abc": {State: "FOLLOWER", Committed: 1059, Applied: 3, PIndex: 1059},
		}, "", "Raft group S-R3F-abc has applied 3 of 1059 committed entries", ""},
		{"current", map[string]server.RaftzGroup{"S-R3F-abc": {Committed: 1059, Applied: 1059, PIndex: 1059}}, "", "", ""},
		{"entries in flight under steady publishing", map[string]server.RaftzGroup{"S-R3F-abc": {Committed: 5100, Applied: 5000}}, "", "", ""},
		{"just past the entries in flight", map[string]server.RaftzGroup{"S-R3F-abc": {Committed: 5101, Applied: 5000}}, "", "applied 5000 of 5101", ""},
		{"catching up", map[string]server.RaftzGroup{"C-R3F-xyz": {Committed: 10, Applied: 10, CatchingUp: true}}, "", "Raft group C-R3F-xyz is catching up", ""},
		{"one of many behind", map[string]server.RaftzGroup{
			"A": {Committed: 9, Applied: 9}, "B": {Committed: 900, Applied: 1}, "C": {Committed: 9, Applied: 9},
		}, "", "Raft group B", ""},
		{"no groups", nil, `{}`, "", ""},
		{"null", nil, `null`, "", ""},
		{"hostile names are shown, not carried", nil, `{"A":{"a\"b\nc":{"committed":500,"applied":0}}}`, "Raft group a?b?c has", ""},
		// Past the reader's key limit a name arrives empty: the group is
		// still judged.
		{"a name too long to keep", map[string]server.RaftzGroup{long: {Committed: 500}}, "", `Raft group "" has applied 0 of 500`, ""},
		{"not a number", nil, `{"A":{"G":{"committed":"x"}}}`, "", "/raftz"},
		{"not JSON", nil, `ok`, "", "/raftz"},
		{"nested past the depth limit", nil, `{"A":{"G":{"x":` + strings.Repeat("[", 100), "", "/raftz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == "" {
				body = raftzBody(t, tc.groups)
			}
			got, err := DecodeApplyBacklog(strings.NewReader(body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("DecodeApplyBacklog = %q, want %q", got, tc.want)
			}
		})
	}
}

// A server with no groups of the account answers 404 (nothing to wait
// for); any other failure is an error, which holds a rollout.
func TestFetchApplyBacklogByStatus(t *testing.T) {
	behind := raftzBody(t, map[string]server.RaftzGroup{"G": {Committed: 500}})
	for _, tc := range []struct {
		code       int
		body, want string
		err        bool
	}{
		{http.StatusOK, behind, "Raft group G", false},
		{http.StatusNotFound, "No Raft nodes returned, check supplied filters", "", false},
		{http.StatusInternalServerError, "{}", "", true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("acc") != "A B" {
				t.Errorf("asked for %q", r.URL.RawQuery)
			}
			w.WriteHeader(tc.code)
			_, _ = w.Write([]byte(tc.body))
		}))
		got, err := FetchApplyBacklog(context.Background(), srv.Client(), srv.URL+RaftzQuery("A B"))
		srv.Close()
		if (err != nil) != tc.err || !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%d: %q, %v; want %q (error: %t)", tc.code, got, err, tc.want, tc.err)
		}
	}
}
