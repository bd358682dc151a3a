package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// figures are one run's measurements, by name. A benchmark reports them to
// go test (ReportMetric) and keeps them for the summary table that
// TestMain prints once every run is over.
type figures struct {
	bench  string
	values map[string]float64
}

func newFigures(bench string) *figures {
	return &figures{bench: bench, values: map[string]float64{}}
}

func (f *figures) set(name string, v float64) { f.values[name] = v }

// report hands the figures to go test and keeps them for the summary.
func (f *figures) report(b *testing.B) {
	for name, v := range f.values {
		b.ReportMetric(v, name)
	}
	keepRun(f)
}

// A goal is what a figure should be: at most, or exactly, a number; floor
// names the figure of the same run it is divided by, for the ratio column.
type goal struct {
	figure string
	atMost float64
	exact  bool
	floor  string
}

func (g goal) String() string {
	switch {
	case math.IsNaN(g.atMost):
		return ""
	case g.exact:
		return fmt.Sprintf("= %g", g.atMost)
	}
	return fmt.Sprintf("<= %g", g.atMost)
}

func (g goal) met(v float64) bool {
	if g.exact {
		return v == g.atMost
	}
	return v <= g.atMost
}

// goals lists, per benchmark, the figures the summary shows, in order, with
// the goals the issues set. A figure without a goal (NaN) is shown for its
// ratio or as context.
var goals = map[string][]goal{
	"JetStreamConvergence": {
		{figure: "a_ready_s", atMost: math.NaN(), floor: "g_api_status_floor_s"},
		{figure: "a/g", atMost: 1.1},
		{figure: "a/f", atMost: math.NaN()},
		{figure: "a/e", atMost: math.NaN()},
		{figure: "ms/object", atMost: math.NaN()},
		{figure: "b_peak_rss_MiB", atMost: 48, floor: "b_cache_floor_rss_MiB"},
		{figure: "b_anon_rss_MiB", atMost: math.NaN()},
		{figure: "c_writes/object", atMost: 1, exact: true},
		{figure: "d_idle_requests", atMost: 0, exact: true},
		{figure: "h_restart_recheck_s", atMost: math.NaN(), floor: "i_nats_read_floor_s"},
		{figure: "h/i", atMost: 2},
		{figure: "l_cache_sync_floor_s", atMost: math.NaN()},
		{figure: "j_restart_writes", atMost: 0, exact: true},
		{figure: "k_connections/system", atMost: 1, exact: true},
	},
	"ScrapeCost":            scrapeCostGoals(),
	"ScrapeCostJWTAccounts": scrapeCostGoals(goal{figure: "account_limits", atMost: math.NaN()}),
	"NatsClusterReady": {
		{figure: "ready_s", atMost: math.NaN(), floor: "floor_s"},
		{figure: "operator_share_s", atMost: 1},
		{figure: "pod_to_ready_s", atMost: 0.3},
		{figure: "publish_stall_s", atMost: 5},
		{figure: "route_tls_share_s", atMost: math.NaN()},
	},
}

// scrapeCostGoals are the goals of both scrape cost benchmarks, with the
// figures only one of them has before the exporter's memory.
func scrapeCostGoals(more ...goal) []goal {
	out := []goal{
		{figure: "server_share_30s_pct", atMost: 1},
		{figure: "server_cpu_ms", atMost: math.NaN()},
		{figure: "exporter_cpu_ms", atMost: math.NaN()},
		{figure: "collect_ms", atMost: math.NaN()},
		{figure: "scrape_KiB", atMost: math.NaN()},
		{figure: "series", atMost: math.NaN()},
	}
	out = append(out, more...)
	return append(out,
		goal{figure: "exporter_peak_rss_MiB", atMost: 64},
		goal{figure: "exporter_anon_rss_MiB", atMost: math.NaN()})
}

var (
	runsMu sync.Mutex
	runs   = map[string][]map[string]float64{} // bench -> each run's figures
)

func keepRun(f *figures) {
	runsMu.Lock()
	defer runsMu.Unlock()
	runs[f.bench] = append(runs[f.bench], f.values)
}

// TestMain runs the package, then prints the summary of the benchmarks
// that ran: each figure's median over the runs, its goal, and its ratio to
// its floor (medians of the per-run ratios, measured in the same run).
func TestMain(m *testing.M) {
	code := m.Run()
	writeSummary(os.Stdout)
	os.Exit(code)
}

func writeSummary(w io.Writer) {
	runsMu.Lock()
	defer runsMu.Unlock()
	if len(runs) == 0 {
		return
	}
	benches := make([]string, 0, len(runs))
	for b := range runs {
		benches = append(benches, b)
	}
	sort.Strings(benches)
	var out strings.Builder
	out.WriteString("\nsummary (medians over runs)\n")
	fmt.Fprintf(&out, "%-22s %-20s %5s %12s %10s %12s %s\n", "benchmark", "figure", "runs", "median", "goal", "/floor", "verdict")
	for _, b := range benches {
		for _, g := range goals[b] {
			var vals, ratios []float64
			for _, r := range runs[b] {
				v, ok := r[g.figure]
				if !ok {
					continue
				}
				vals = append(vals, v)
				if g.floor != "" && r[g.floor] > 0 {
					ratios = append(ratios, v/r[g.floor])
				}
			}
			if len(vals) == 0 {
				continue
			}
			med := median(vals)
			ratio, verdict := "", ""
			if len(ratios) > 0 {
				ratio = fmt.Sprintf("%.2f", median(ratios))
			}
			if !math.IsNaN(g.atMost) {
				verdict = "missed"
				if g.met(med) {
					verdict = "met"
				}
			}
			fmt.Fprintf(&out, "%-22s %-20s %5d %12.4f %10s %12s %s\n", b, g.figure, len(vals), med, g, ratio, verdict)
		}
	}
	_, _ = io.WriteString(w, out.String())
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
