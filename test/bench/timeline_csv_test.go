package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// writeTimeline writes, when KUBENATS_BENCH_TIMELINE names a directory,
// each series' times (seconds since its start at which one more object was
// Ready, or made) as CSV, one file per run: hack/benchplot draws them. The
// file is named after the run's size and the time, so that -count runs
// keep every run.
func writeTimeline(b testing.TB, objects int, series map[string][]time.Duration) {
	b.Helper()
	dir := os.Getenv("KUBENATS_BENCH_TIMELINE")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	var out strings.Builder
	out.WriteString("series,seconds\n")
	names := make([]string, 0, len(series))
	for name := range series {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		times := append([]time.Duration(nil), series[name]...)
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		for _, t := range times {
			fmt.Fprintf(&out, "%s,%.4f\n", name, t.Seconds())
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("jetstream-%d-%s.csv", 2*objects, time.Now().UTC().Format("20060102T150405")))
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("timeline written to %s", path)
}
