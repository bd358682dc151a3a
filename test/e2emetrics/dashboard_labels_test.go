package e2emetrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/promserver"
)

// checkDashboardLabels: every label name a panel of the servers' and the
// streams' dashboards uses (in a selector, in a by clause, in its legend)
// is on the series a real scrape of f's servers serves under that name,
// as Prometheus stored them. test/promql checks the names against the
// families the exporter declares; this checks the labels against what was
// scraped. A series no scrape served (no mirror here, so no mirror lag)
// cannot be checked and is logged; every other one is.
//
// Careless variant run: the streams dashboard's "Messages per stream"
// grouped by stream and shown as {{stream}} (the label is stream_name):
// TestDashboardsUseServedSeries passed, this failed with "groups by
// stream, which none of [nats_stream_total_messages]'s served series
// carries" and "its legend shows stream, which its answer ... does not
// carry".
func checkDashboardLabels(t *testing.T, f *e2ekit.Formed, p *promserver.Server) {
	ctx := e2ekit.Ctx(t)
	served := map[string]map[string]bool{} // series name -> its labels, as scraped
	labelsOf := func(name string) (map[string]bool, error) {
		if l, ok := served[name]; ok {
			return l, nil
		}
		got, err := p.Query(ctx, fmt.Sprintf(`{__name__=%q,%s}`, name, selector(f)))
		if err != nil {
			return nil, err
		}
		l := map[string]bool{}
		for _, s := range got {
			for k := range s.Labels {
				l[k] = true
			}
		}
		served[name] = l
		return l, nil
	}
	var unscraped []string
	checked := 0
	for _, file := range []string{"kubenats-servers", "kubenats-streams"} {
		data, err := os.ReadFile(filepath.Join(cluster.RepoRoot(), "config", "grafana", file+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var d dashboardFile
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		for _, panel := range d.Panels {
			for _, target := range panel.Targets {
				where := fmt.Sprintf("%s %q", file, panel.Title)
				expr := strings.NewReplacer("$namespace", f.NS, "$natscluster", f.Cluster.Name).Replace(target.Expr)
				uses, err := labelUses(expr)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				for _, u := range uses {
					have := map[string]bool{}
					scraped := false
					for _, name := range u.series {
						l, err := labelsOf(name)
						if err != nil {
							t.Fatal(err)
						}
						if len(l) == 0 {
							unscraped = append(unscraped, name)
							continue
						}
						scraped = true
						for k := range l {
							have[k] = true
						}
					}
					if !scraped {
						continue
					}
					checked++
					if !have[u.label] {
						t.Errorf("%s %s %s, which none of %v's served series carries (they carry %v)", where, u.how, u.label, u.series, sortedKeys(have))
					}
				}
				// The legend names labels of the query's answer.
				got, err := p.Query(ctx, expr)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				for _, m := range legendLabel.FindAllStringSubmatch(target.LegendFormat, -1) {
					for _, s := range got {
						checked++
						if _, ok := s.Labels[m[1]]; !ok {
							t.Errorf("%s: its legend shows %s, which its answer %v does not carry", where, m[1], s.Labels)
							break
						}
					}
				}
			}
		}
	}
	slices.Sort(unscraped)
	t.Logf("%d label uses checked against the scraped series; no series scraped for %v", checked, slices.Compact(unscraped))
	if checked == 0 {
		t.Fatal("no panel's labels could be checked: nothing was scraped")
	}
}

// legendLabel is a label a Grafana legend shows.
var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// labelUse is a label name a query relies on, and the series it must be on.
type labelUse struct {
	label  string
	how    string // "selects by", "groups by"
	series []string
}

// The shapes of the generated dashboards' queries: selectors with
// matchers, and aggregations by labels (this module does without
// Prometheus' own parser; test/promql parses them with it).
var (
	selectorRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"`)
	byRE       = regexp.MustCompile(`\bby\s*\(([^)]*)\)`)
	unreadRE   = regexp.MustCompile(`\b(?:without|on|ignoring|group_left|group_right|label_replace|label_join)\s*\(`)
)

// labelUses are the label names expr selects or groups by, each with the
// series names it must be on: a selector's matchers on its own series, a
// by clause's labels on one of the query's series.
func labelUses(expr string) ([]labelUse, error) {
	if m := unreadRE.FindString(expr); m != "" {
		return nil, fmt.Errorf("%s: %q is a shape this check does not read", expr, m)
	}
	var out []labelUse
	var all []string
	for _, sel := range selectorRE.FindAllStringSubmatch(expr, -1) {
		all = append(all, sel[1])
		for _, m := range matcherRE.FindAllStringSubmatch(sel[2], -1) {
			out = append(out, labelUse{label: m[1], how: "selects by", series: []string{sel[1]}})
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no selector with matchers", expr)
	}
	for _, by := range byRE.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(by[1], ",") {
			if l = strings.TrimSpace(l); l != "" && l != "le" {
				out = append(out, labelUse{label: l, how: "groups by", series: all})
			}
		}
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
