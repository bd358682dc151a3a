package controller

import "testing"

// TestConnectionAllowed: --connection-allowed-namespaces, empty for
// today's behaviour (every namespace may use spec.connection).
func TestConnectionAllowed(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		ns      string
		want    bool
	}{
		{nil, "team-a", true},
		{[]string{"team-a"}, "team-a", true},
		{[]string{"team-a"}, "team-b", false},
		{[]string{"team-a", "team-b"}, "team-b", true},
		{[]string{"*"}, "team-a", false}, // no wildcard: a list is a list
	} {
		if got := connectionAllowed(tc.allowed, tc.ns); got != tc.want {
			t.Errorf("connectionAllowed(%v, %q) = %t, want %t", tc.allowed, tc.ns, got, tc.want)
		}
	}
}
