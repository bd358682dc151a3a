package e2emetrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/promserver"
)

// dashboardOut names the directory TestMetricsWithARealPrometheus writes
// the dashboards' answers to, as JSON, for `make dashboard-images` to draw
// (hack/benchplot/dashboard). Unset, nothing is written.
const dashboardOut = "KUBENATS_DASHBOARD_OUT"

// dashboardAnswers is what one dashboard showed over the test: each
// panel's queries, as Grafana would send them for the cluster, answered
// by the real Prometheus.
type dashboardAnswers struct {
	Title  string        `json:"title"`
	From   time.Time     `json:"from"`
	Panels []panelAnswer `json:"panels"`
}

type panelAnswer struct {
	Title  string         `json:"title"`
	Unit   string         `json:"unit"`
	Series []seriesAnswer `json:"series"`
}

type seriesAnswer struct {
	Legend string       `json:"legend"`
	Points [][2]float64 `json:"points"` // seconds since From, value
}

// dashboardFile is the part of a generated dashboard (config/grafana) the
// picture needs.
type dashboardFile struct {
	Title  string `json:"title"`
	Panels []struct {
		Title       string `json:"title"`
		FieldConfig struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

// writeDashboardAnswers asks p every panel query of the servers' and the
// streams' dashboards for f's cluster, from from to now, and writes the
// answers under $KUBENATS_DASHBOARD_OUT.
func writeDashboardAnswers(t *testing.T, p *promserver.Server, f *e2ekit.Formed, from time.Time) {
	dir := os.Getenv(dashboardOut)
	if dir == "" {
		return
	}
	ctx := e2ekit.Ctx(t)
	// The pictures end once every server has been back for five scrapes:
	// the server-down check returns on the first scrape that sees it up,
	// which a range query's 2 s steps may not reach yet.
	back := fmt.Sprintf(`min_over_time(kubenats_exporter_server_up{%s}[%s]) == 1`, selector(f), 5*promScrape)
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		got, err := p.Query(ctx, back)
		if err != nil {
			return err
		}
		if len(got) != len(f.Pods) {
			return fmt.Errorf("%d of %d servers up for the last five scrapes", len(got), len(f.Pods))
		}
		return nil
	})
	for _, name := range []string{"kubenats-servers", "kubenats-streams"} {
		data, err := os.ReadFile(filepath.Join(cluster.RepoRoot(), "config", "grafana", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var d dashboardFile
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		out := dashboardAnswers{Title: d.Title, From: from}
		for _, panel := range d.Panels {
			pa := panelAnswer{Title: panel.Title, Unit: panel.FieldConfig.Defaults.Unit}
			for _, target := range panel.Targets {
				pa.Series = append(pa.Series, panelSeries(ctx, t, p, f, target.Expr, from)...)
			}
			out.Panels = append(out.Panels, pa)
		}
		text, err := json.MarshalIndent(out, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("dashboards' answers written to %s", dir)
}

// panelSeries is one panel query over the test, the dashboard's variables
// set to f's namespace and cluster.
func panelSeries(ctx context.Context, t *testing.T, p *promserver.Server, f *e2ekit.Formed, expr string, from time.Time) []seriesAnswer {
	q := strings.NewReplacer("$namespace", f.NS, "$natscluster", f.Cluster.Name).Replace(expr)
	got, err := p.QueryRange(ctx, q, from, time.Now(), promScrape)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []seriesAnswer
	for _, s := range got {
		sa := seriesAnswer{Legend: legend(s.Labels)}
		for _, pt := range s.Points {
			sa.Points = append(sa.Points, [2]float64{pt.T.Sub(from).Seconds(), pt.V})
		}
		out = append(out, sa)
	}
	return out
}

// legend names a series by what tells it apart in a panel: the server, or
// the stream and consumer, not the labels every series of the cluster has.
func legend(labels map[string]string) string {
	if s := labels["server_name"]; s != "" {
		return s
	}
	common := map[string]bool{"__name__": true, "namespace": true, "natscluster": true, "job": true, "instance": true,
		"pod": true, "container": true, "server_id": true, "cluster": true, "domain": true, "account": true, "account_id": true}
	var keys []string
	for k := range labels {
		if !common[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, labels[k])
	}
	return strings.Join(parts, "/")
}
