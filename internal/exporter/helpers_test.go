package exporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// capturedServers are the servers of testdata/ (TestCaptureMonitorJSON):
// c-1 led the meta group, ORDERS and its consumer worker; c-0 led the R1
// mirror ORDERS_COPY.
var capturedServers = []string{"c-0", "c-1", "c-2"}

func load(t *testing.T, server, endpoint string, v any) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", server+"-"+endpoint+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Decode(f, MaxJSZBody, v); err != nil {
		t.Fatal(err)
	}
}

func identity(server string) Identity {
	return Identity{Server: server, Namespace: "team-a", NatsCluster: "orders"}
}

// clusterSamples are the bounded samples all three captured servers serve.
func clusterSamples(t *testing.T) []Sample {
	t.Helper()
	var out []Sample
	for _, s := range capturedServers {
		var z JSZ
		load(t, s, "jsz", &z)
		server, groups := JSZSamples(identity(s), z)
		kept, _ := Bound(groups, 1<<20)
		out = append(append(out, server...), kept...)
	}
	return out
}

// labelsOf maps s's label names to values.
func labelsOf(s Sample) map[string]string {
	f := family(s.Name)
	out := map[string]string{}
	for i, n := range f.Labels {
		out[n] = s.Labels[i]
	}
	return out
}

// find is the samples named name whose labels include want.
func find(samples []Sample, name string, want map[string]string) []Sample {
	var out []Sample
next:
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		l := labelsOf(s)
		for k, v := range want {
			if l[k] != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
