package plan

import (
	"slices"
	"strings"
	"testing"
)

func TestSpreadReplicasOverZones(t *testing.T) {
	for _, tc := range []struct {
		name                string
		allowed             bool
		nodeZones, runZones []string
		want                bool
	}{
		{"three zones of nodes, before any server runs", true, []string{"a", "b", "c", "a"}, nil, true},
		// Careless: "more than one zone" would refuse every R3 stream here.
		{"two zones are too few for R3", true, []string{"a", "b", "b"}, []string{"a", "b"}, false},
		{"one zone", true, []string{"a", "a"}, []string{"a"}, false},
		{"nodes without zones count as one more", true, []string{"a", "b", ""}, nil, true},
		{"a zone's nodes briefly gone: the servers keep it on", true, []string{"a", "b"}, []string{"a", "b", "c"}, true},
		{"off by spec", false, []string{"a", "b", "c"}, []string{"a", "b", "c"}, false},
		{"no node known (namespaced install): the servers decide", true, nil, []string{"a", "b", "c"}, true},
	} {
		if got := SpreadReplicasOverZones(tc.allowed, tc.nodeZones, tc.runZones); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckZoneRedundancy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		servers   map[string]string
		zones     []string
		known     bool
		redundant bool
		mention   string
	}{
		{"one zone only: nothing to say", map[string]string{"n0": "a", "n1": "a", "n2": "a"}, []string{"a"}, false, false, ""},
		{"no zones at all", map[string]string{"n0": "", "n1": ""}, nil, false, false, ""},
		{"three over three", map[string]string{"n0": "a", "n1": "b", "n2": "c"}, nil, true, true, "3 servers over 3 zones"},
		{"five over three, 2/2/1", map[string]string{"n0": "a", "n1": "a", "n2": "b", "n3": "b", "n4": "c"}, nil, true, true, "quorum of 3"},
		{"a quorum in one zone", map[string]string{"n0": "a", "n1": "a", "n2": "b"}, nil, true, false, `zone "a" holds n0, n1`},
		// Careless: "a quorum sits in one zone" (3 of 4) passes 2/1/1,
		// yet losing zone a leaves 2 of 4, short of the quorum of 3.
		{"half in one zone is enough to stop it", map[string]string{"n0": "a", "n1": "a", "n2": "b", "n3": "c"}, nil, true, false, `zone "a" holds n0, n1`},
		{"all servers in one zone while nodes span two", map[string]string{"n0": "a", "n1": "a", "n2": "a"}, []string{"a", "b"}, true, false, `zone "a"`},
	} {
		got := CheckZoneRedundancy(tc.servers, tc.zones)
		if got.Known != tc.known || got.Redundant != tc.redundant || !strings.Contains(got.Message, tc.mention) {
			t.Errorf("%s: got %+v, want known %v redundant %v mentioning %q", tc.name, got, tc.known, tc.redundant, tc.mention)
		}
	}
}

func TestServersByZone(t *testing.T) {
	got := ServersByZone(map[string]string{"n2": "b", "n0": "a", "n1": "b", "n3": ""})
	want := []ZoneServers{{"", []string{"n3"}}, {"a", []string{"n0"}}, {"b", []string{"n1", "n2"}}}
	if !slices.EqualFunc(got, want, func(x, y ZoneServers) bool { return x.Zone == y.Zone && slices.Equal(x.Servers, y.Servers) }) {
		t.Errorf("got %v, want %v", got, want)
	}
}
