package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// scrapeSize is what one scrape-cost run serves.
type scrapeSize struct {
	streams  int // each with one durable consumer
	scrapes  int
	accounts int // JWT accounts the streams are spread over; 0: no JWT mode
}

// BenchmarkScrapeCost: what a scrape costs the server it reads, at 1000
// streams and 1000 consumers on one server. The metrics container reads
// /varz, /healthz and /jsz (accounts, streams, consumers, Raft groups, no
// config) at every scrape; the figures are per scrape, taken over
// back-to-back scrapes as Prometheus sends them (with its timeout
// header), less what the same processes spend idle over the same time:
//
//   - server_cpu_ms: the nats-server's CPU, user and system;
//   - exporter_cpu_ms: the metrics container's (kubenats exporter);
//   - collect_ms: the median wall time of a scrape, as Prometheus waits;
//   - scrape_KiB, series: the size of the answer;
//   - server_share_30s_pct: server_cpu_ms against the 30 s a PodMonitor
//     leaves between scrapes, the goal being at most 1 %;
//   - exporter_peak_rss_MiB: the container's peak RSS, against its 64 MiB
//     limit, and exporter_anon_rss_MiB its anonymous part at the end (the
//     rest is the pages of the operator's 80 MB binary, which the kernel
//     can drop and read again).
//
// One server holds a replica of each stream, as each server of an R3
// cluster does of an R3 stream (the Raft groups' replicas add a line per
// follower to /jsz; here there are none).
func BenchmarkScrapeCost(b *testing.B) {
	for range b.N {
		scrapeCost(b, scrapeSize{streams: 1000, scrapes: 10}).report(b)
	}
}

// BenchmarkScrapeCostJWTAccounts: the same at 1000 streams and consumers
// spread over 100 JWT accounts with JetStream limits, where the meta
// leader's metrics container also reads each account's /accountz for its
// limits (100 more requests per scrape).
func BenchmarkScrapeCostJWTAccounts(b *testing.B) {
	for range b.N {
		scrapeCost(b, scrapeSize{streams: 1000, scrapes: 10, accounts: 100}).report(b)
	}
}

// name is the benchmark the figures of a run of size belong to.
func (size scrapeSize) name() string {
	if size.accounts > 0 {
		return "ScrapeCostJWTAccounts"
	}
	return "ScrapeCost"
}

func scrapeCost(b testing.TB, size scrapeSize) *figures {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var trust *jwtTrust
	if size.accounts > 0 {
		trust = newJWTTrust(b, size.accounts)
	}
	server := startScrapeServer(b, trust)
	server.fill(b, ctx, size.streams)
	exporter := startExporter(b, server)
	// The first scrape warms the exporter's connection and buffers.
	if _, err := exporter.scrape(ctx); err != nil {
		b.Fatal(err)
	}
	// The idle rate of both processes, over a window as long as the
	// scrapes will take, is taken off what the scrapes cost.
	began := time.Now()
	var walls []time.Duration
	var body []byte
	serverBefore, exporterBefore := server.proc.cpu(b), exporter.proc.cpu(b)
	for range size.scrapes {
		start := time.Now()
		text, err := exporter.scrape(ctx)
		if err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(start))
		body = text
	}
	busy := time.Since(began)
	serverBusy, exporterBusy := server.proc.cpu(b)-serverBefore, exporter.proc.cpu(b)-exporterBefore
	serverIdle, exporterIdle := idleRates(b, server.proc, exporter.proc, busy)
	perScrape := func(used, idleRate float64) float64 {
		return max(used-idleRate*busy.Seconds(), 0) / float64(size.scrapes) * 1000
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	f := newFigures(size.name())
	f.set("server_cpu_ms", perScrape(serverBusy, serverIdle))
	f.set("exporter_cpu_ms", perScrape(exporterBusy, exporterIdle))
	f.set("collect_ms", float64(walls[len(walls)/2].Microseconds())/1000)
	f.set("scrape_KiB", float64(len(body))/1024)
	f.set("series", float64(seriesIn(body)))
	f.set("account_limits", float64(bytes.Count(body, []byte("\nnats_account_max_storage{"))))
	f.set("server_share_30s_pct", f.values["server_cpu_ms"]/1000/30*100)
	f.set("exporter_peak_rss_MiB", exporter.proc.status(b, "VmHWM:"))
	f.set("exporter_anon_rss_MiB", exporter.proc.status(b, "RssAnon:"))
	b.Logf("%d streams and consumers, %d scrapes in %s: %v", size.streams, size.scrapes, busy.Round(time.Millisecond), f.values)
	return f
}

// idleRates are the CPU seconds per second each process spends with
// nobody scraping, over d.
func idleRates(b testing.TB, server, exporter *benchProcess, d time.Duration) (float64, float64) {
	s0, e0 := server.cpu(b), exporter.cpu(b)
	began := time.Now()
	// A benchmark measures a duration here; nothing is waited for.
	time.Sleep(d)
	took := time.Since(began).Seconds()
	return (server.cpu(b) - s0) / took, (exporter.cpu(b) - e0) / took
}

// seriesIn counts the samples of a Prometheus text answer.
func seriesIn(text []byte) int {
	n := 0
	for _, line := range bytes.Split(text, []byte("\n")) {
		if len(line) > 0 && line[0] != '#' {
			n++
		}
	}
	return n
}

// exporterProcess is a `kubenats exporter` reading one server.
type exporterProcess struct {
	proc *benchProcess
	url  string
}

// scrape asks for /metrics as Prometheus does, with its timeout header.
func (e *exporterProcess) scrape(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	if !bytes.Contains(body, []byte("kubenats_exporter_server_up{")) || bytes.Contains(body, []byte("kubenats_exporter_server_up{namespace=\"bench\",natscluster=\"bench\",server_id=\"bench-0\",server_name=\"bench-0\"} 0")) {
		return nil, fmt.Errorf("the exporter did not read its server:\n%s", firstLines(body, 20))
	}
	return body, nil
}

func firstLines(text []byte, n int) string {
	lines := strings.SplitN(string(text), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// status reads one of /proc/<pid>/status's kB figures, in MiB.
func (p *benchProcess) status(b testing.TB, field string) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("%s of %s: %v", field, p.name, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == field {
			var kb float64
			fmt.Sscan(fields[1], &kb)
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, p.cmd.Process.Pid)
	return 0
}
