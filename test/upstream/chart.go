package upstream

import (
	"os"
	"path/filepath"
	"testing"
)

// TheRelease is the release the tests take over and convert: three
// clustered JetStream servers on 1Gi claims, named nats, as the real
// rendering CI holds (the chart's values: cluster on, 3 replicas,
// JetStream file store 1Gi).
var TheRelease = Chart{Release: "nats", Replicas: 3, FileStore: "1Gi"}

// ChartRendering is TheRelease as the official chart renders it: the real
// rendering under Env's directory when set, else ChartRelease's.
func ChartRendering(t testing.TB) []byte {
	t.Helper()
	d := dir(t)
	if d == "" {
		return ChartRelease(TheRelease)
	}
	data, err := os.ReadFile(filepath.Join(d, upstreamChart))
	if err != nil {
		t.Fatalf("the official chart's rendering: %v", err)
	}
	return data
}

// ChartFile is a file holding ChartRendering, for what reads files.
func ChartFile(t testing.TB) string {
	t.Helper()
	if d := dir(t); d != "" {
		return filepath.Join(d, upstreamChart)
	}
	path := filepath.Join(t.TempDir(), "nats-chart-release.yaml")
	if err := os.WriteFile(path, ChartRelease(TheRelease), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
