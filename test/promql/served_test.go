package promql

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/alerts"
	"github.com/kubenats/kubenats/internal/exporter"
	"github.com/kubenats/kubenats/internal/metrics"
)

// served is every series name the project serves, from the code that
// serves them.
func served() map[string]bool {
	out := map[string]bool{}
	for _, f := range exporter.Families() {
		out[f.Name] = true
	}
	for _, n := range metrics.Families() {
		out[n] = true
	}
	return out
}

// names are the series names expr selects; an error if it does not parse
// or selects by something other than a name.
func names(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	var bad error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName {
				if m.Type != labels.MatchEqual {
					bad = fmt.Errorf("%s: selects series by a pattern of names", vs)
				}
				name = m.Value
			}
		}
		if name == "" {
			bad = fmt.Errorf("%s selects no name", vs)
		}
		out = append(out, name)
		return nil
	})
	return out, bad
}

// unserved is the names in expr that nothing serves.
func unserved(expr string, have map[string]bool) ([]string, error) {
	ns, err := names(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range ns {
		if !have[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// TestCheckerCatchesWhatNobodyServes: the check itself, on expressions a
// careless rule would have. Each must be refused.
func TestCheckerCatchesWhatNobodyServes(t *testing.T) {
	have := served()
	for _, expr := range []string{
		`nats_stream_num_pending > 0`,                      // a name the exporter never had
		`gnatsd_varz_connections`,                          // the exporter without -prefix=nats
		`jetstream_consumer_num_pending`,                   // the default jsz prefix
		`sum(rate(nats_varz_in_msgs[5m])) / nats_varz_foo`, // one bad name among good ones
	} {
		bad, err := unserved(expr, have)
		if err != nil || len(bad) == 0 {
			t.Errorf("%s passed the check (err %v)", expr, err)
		}
	}
	if _, err := unserved(`nats_varz_connections{`, have); err == nil {
		t.Error("a query that does not parse passed")
	}
}

// TestAlertsUseServedSeries parses every alert, scoped to a cluster and
// for every cluster. Careless variant watched failing: an alert on
// nats_stream_num_pending (no such series) is refused with its name.
func TestAlertsUseServedSeries(t *testing.T) {
	have := served()
	for _, scope := range [][2]string{{"", ""}, {"team-a", "orders"}} {
		for _, g := range alerts.Groups(scope[0], scope[1]) {
			for _, r := range g.Rules {
				bad, err := unserved(r.Expr.String(), have)
				if err != nil {
					t.Errorf("%s: %v", r.Alert, err)
				}
				if len(bad) > 0 {
					t.Errorf("%s uses series nothing serves: %v", r.Alert, bad)
				}
			}
		}
	}
}

// TestShippedRulesAreGenerated: config/prometheus/rules.yaml holds the
// rules of internal/alerts, expressions and all (make generate writes it).
func TestShippedRulesAreGenerated(t *testing.T) {
	file := shippedRules(t)
	want := alerts.Groups("", "")[0].Rules
	if len(file) != len(want) {
		t.Errorf("rules.yaml has %d rules, internal/alerts %d: run make generate", len(file), len(want))
	}
	for i := range min(len(file), len(want)) {
		if file[i].Alert != want[i].Alert || file[i].Expr.String() != want[i].Expr.String() || *file[i].For != *want[i].For {
			t.Errorf("rules.yaml's rule %d is %s %q for %s, internal/alerts has %s %q for %s: run make generate",
				i, file[i].Alert, file[i].Expr.String(), *file[i].For, want[i].Alert, want[i].Expr.String(), *want[i].For)
		}
	}
}

// shippedRules are the rules of config/prometheus/rules.yaml, the file a
// user applies.
func shippedRules(t *testing.T) []monitoringv1.Rule {
	t.Helper()
	text, err := os.ReadFile("../../config/prometheus/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(text, &pr); err != nil {
		t.Fatal(err)
	}
	if len(pr.Spec.Groups) != 1 {
		t.Fatalf("rules.yaml has %d groups, want 1", len(pr.Spec.Groups))
	}
	return pr.Spec.Groups[0].Rules
}

// TestDashboardsUseServedSeries parses every query of every dashboard in
// config/grafana as Grafana would send it.
func TestDashboardsUseServedSeries(t *testing.T) {
	have := served()
	for file, data := range dashboards(t) {
		var d struct {
			UID    string `json:"uid"`
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if d.UID == "" || len(d.Panels) == 0 {
			t.Fatalf("%s: no uid or no panels", file)
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				bad, err := unserved(tg.Expr, have)
				if err != nil {
					t.Errorf("%s %q: %v", filepath.Base(file), p.Title, err)
				}
				if len(bad) > 0 {
					sort.Strings(bad)
					t.Errorf("%s %q uses series nothing serves: %v", filepath.Base(file), p.Title, bad)
				}
			}
		}
	}
}

// TestDashboardVariablesReadTheirPanelsSeries: each dashboard's namespace
// and natscluster variables are `label_values` of a served series that
// carries the label, and a dashboard whose panels show the servers' series
// reads its variables from a server series too: a team's Prometheus that
// scrapes its servers and not the operator must still be offered its
// clusters. Careless variant watched failing: the servers dashboard
// reading its variables from kubenats_natscluster_servers (the operator's)
// showed no cluster at all to such a Prometheus.
func TestDashboardVariablesReadTheirPanelsSeries(t *testing.T) {
	fromServers := map[string][]string{}
	for _, f := range exporter.Families() {
		fromServers[f.Name] = f.Labels
	}
	have := served()
	for file, data := range dashboards(t) {
		var d struct {
			Panels []struct {
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
			Templating struct {
				List []struct {
					Name  string          `json:"name"`
					Type  string          `json:"type"`
					Query json.RawMessage `json:"query"` // a data source variable's is a string

				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		showsServers := false
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				ns, _ := names(tg.Expr)
				for _, n := range ns {
					showsServers = showsServers || fromServers[n] != nil
				}
			}
		}
		base := filepath.Base(file)
		seen := 0
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			seen++
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Errorf("%s: variable %s: %v", base, v.Name, err)
				continue
			}
			series, label, ok := labelValues(q.Query)
			if !ok {
				t.Errorf("%s: variable %s: %q is not label_values(series, label)", base, v.Name, q.Query)
				continue
			}
			ns, err := names(series)
			if err != nil || len(ns) != 1 || !have[ns[0]] {
				t.Errorf("%s: variable %s reads %q, not one served series (%v)", base, v.Name, series, err)
				continue
			}
			labels, isServer := fromServers[ns[0]]
			if isServer && !slices.Contains(labels, label) {
				t.Errorf("%s: variable %s reads label %s, which %s does not carry", base, v.Name, label, ns[0])
			}
			if showsServers && !isServer {
				t.Errorf("%s shows the servers' series but its variable %s reads %s, an operator series", base, v.Name, ns[0])
			}
		}
		if seen != 2 {
			t.Errorf("%s has %d query variables, want namespace and natscluster", base, seen)
		}
	}
}

// labelValues splits Grafana's label_values(series, label).
func labelValues(q string) (series, label string, ok bool) {
	inner, found := strings.CutPrefix(q, "label_values(")
	if !found || !strings.HasSuffix(inner, ")") {
		return "", "", false
	}
	inner = strings.TrimSuffix(inner, ")")
	i := strings.LastIndex(inner, ",")
	if i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(inner[:i]), strings.TrimSpace(inner[i+1:]), true
}

// dashboards are the files of config/grafana, by path: the three
// dashboards the project ships.
func dashboards(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../../config/grafana/*.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("dashboards: %v %v", files, err)
	}
	out := map[string][]byte{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out[file] = data
	}
	return out
}
