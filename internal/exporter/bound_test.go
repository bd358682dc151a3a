package exporter

import (
	"fmt"
	"testing"
)

func group(account, stream string, n int) StreamGroup {
	g := StreamGroup{Account: account, Stream: stream}
	for i := range n {
		g.Samples = append(g.Samples, Sample{Name: fmt.Sprint(stream, i)})
	}
	return g
}

// TestBoundKeepsWholeStreamsByName: the bound keeps whole streams in name
// order, whatever order the server listed them in, and counts the rest.
// Careless variant watched failing: cutting at the limit mid-stream (keep
// samples one by one) serves B's stream series without its consumers'.
func TestBoundKeepsWholeStreamsByName(t *testing.T) {
	for _, tc := range []struct {
		name        string
		groups      []StreamGroup
		limit       int
		wantStreams []string
		wantDropped int
	}{
		{"all fit", []StreamGroup{group("A", "x", 3), group("A", "y", 3)}, 6, []string{"x", "y"}, 0},
		{"the later name goes", []StreamGroup{group("A", "y", 3), group("A", "x", 3)}, 5, []string{"x"}, 3},
		{"accounts first", []StreamGroup{group("B", "a", 2), group("A", "z", 2)}, 3, []string{"z"}, 2},
		{"a small one after a big one fits", []StreamGroup{group("A", "a", 1), group("A", "b", 10), group("A", "c", 1)}, 3, []string{"a", "c"}, 10},
		{"nothing fits", []StreamGroup{group("A", "a", 5)}, 4, nil, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, dropped := Bound(tc.groups, tc.limit)
			var streams []string
			seen := map[string]bool{}
			for _, s := range kept {
				st := s.Name[:1]
				if !seen[st] {
					seen[st] = true
					streams = append(streams, st)
				}
			}
			if fmt.Sprint(streams) != fmt.Sprint(tc.wantStreams) || dropped != tc.wantDropped {
				t.Fatalf("kept %v dropped %d, want %v and %d", streams, dropped, tc.wantStreams, tc.wantDropped)
			}
			if len(kept) > tc.limit {
				t.Fatalf("kept %d series over the limit %d", len(kept), tc.limit)
			}
		})
	}
}
