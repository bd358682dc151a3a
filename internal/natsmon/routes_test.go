package natsmon

import (
	"strings"
	"testing"
)

func TestMissingRoute(t *testing.T) {
	for _, tc := range []struct {
		name  string
		peers map[string][]string
		want  string
	}{
		{"full mesh", map[string][]string{"n-0": {"n-1", "n-2", "n-1"}, "n-1": {"n-0", "n-2"}, "n-2": {"n-0", "n-1"}}, ""},
		{"one server alone", map[string][]string{"n-0": {}}, ""},
		{"a pair without a route", map[string][]string{"n-0": {"n-1"}, "n-1": {"n-0"}, "n-2": {}}, "servers n-0 and n-2"},
		{"seen from one end only", map[string][]string{"n-0": {"n-1"}, "n-1": {}}, "servers n-0 and n-1"},
		{"a server that did not answer", map[string][]string{"n-0": {"n-1"}, "n-1": nil}, "server n-1 did not tell"},
		{"routes to a stranger do not count", map[string][]string{"n-0": {"x"}, "n-1": {"x"}}, "servers n-0 and n-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MissingRoute(tc.peers)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("MissingRoute = %q, want %q", got, tc.want)
			}
		})
	}
}
