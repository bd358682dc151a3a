package bench

import (
	"testing"
	"time"
)

// The small runs are the benchmarks' own code at a size that `make test`
// affords, so that a change that breaks a benchmark (a flag the operator
// now needs, a metrics endpoint that moved, a rendering the floor no longer
// matches) fails CI instead of a later `make bench`. They check that every
// figure was measured, not how good it is: timing goals live in `make
// bench`.
//
// Careless variants they catch (each seen here on the code before this
// test): the operator started without --allow-local-targets (every
// resource ConnectionFailed: the wait fails at once on the refusal), the
// metrics read over HTTP from the HTTPS endpoint (a 400 page: requests()
// fails instead of reading zero), and the floor comparing the ConfigMap
// with a rendering without the reload marks.

func TestJetStreamBenchmarkSmall(t *testing.T) {
	t.Parallel()
	f := jetStreamConvergence(t, jetStreamSize{objects: 50, systems: 2, idleFor: 5 * time.Second})
	for _, name := range []string{"a_ready_s", "b_peak_rss_MiB", "b_cache_floor_rss_MiB", "e_nats_floor_s", "f_api_floor_s", "g_api_status_floor_s", "h_restart_recheck_s", "i_nats_read_floor_s"} {
		if f.values[name] <= 0 {
			t.Errorf("%s = %v, want a measurement", name, f.values[name])
		}
	}
	// Every object gets at least its one Ready status write.
	if w := f.values["c_writes/object"]; w < 1 {
		t.Errorf("c_writes/object = %v, want at least 1", w)
	}
	if c := f.values["k_connections/system"]; c <= 0 {
		t.Errorf("k_connections/system = %v, want a measurement", c)
	}
	t.Logf("%v", f.values)
}

func TestNatsClusterBenchmarkSmall(t *testing.T) {
	t.Parallel()
	f := natsClusterReady(t, false)
	t.Logf("%v", f.values)
}

// TestScrapeCostSmall: the scrape-cost benchmark at 50 streams over 5 JWT
// accounts (the larger of its two setups) measures each of its figures,
// and the real exporter binary serves each account's limit from the real
// server. Careless variants watched failing: the exporter pointed at the
// server's client port instead of its monitor port (it reads nothing:
// every scrape says the server is down, and scrape() refuses that answer
// rather than measure it); /accountz asked by the account's name, which
// JWT mode does not know (no limit served).
func TestScrapeCostSmall(t *testing.T) {
	t.Parallel()
	f := scrapeCost(t, scrapeSize{streams: 50, scrapes: 5, accounts: 5})
	if got := f.values["account_limits"]; got != 5 {
		t.Errorf("%v accounts' storage limits served, want 5", got)
	}
	for _, name := range []string{"collect_ms", "scrape_KiB", "series", "exporter_peak_rss_MiB"} {
		if f.values[name] <= 0 {
			t.Errorf("%s = %v, want a measurement", name, f.values[name])
		}
	}
	// 50 streams with a consumer each: at least their two families each.
	if s := f.values["series"]; s < 100 {
		t.Errorf("%v series for 50 streams and consumers", s)
	}
}

// TestBackupBenchmarkSmall: the backup benchmark on a 16 MiB stream
// measures every figure (both tools ran, both restores made the stream).
func TestBackupBenchmarkSmall(t *testing.T) {
	t.Parallel()
	f := backupThroughput(t, 16)
	for _, g := range goals["BackupThroughput"] {
		if f.values[g.figure] <= 0 {
			t.Errorf("%s = %v, want a measurement", g.figure, f.values[g.figure])
		}
	}
	t.Logf("%v", f.values)
}
