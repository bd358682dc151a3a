package promserver

import (
	"fmt"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// ruleFile is Prometheus's own rule file format, the spec of a
// PrometheusRule without the object around it.
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Shortened says how a test shortens the shipped rules' timing: every
// group evaluated each Evaluation, and the alerts named in For held for
// the duration given instead of their own. Expressions, labels and the
// other alerts stay as shipped.
type Shortened struct {
	Evaluation time.Duration
	For        map[string]time.Duration
}

// RuleFile turns a PrometheusRule manifest (config/prometheus/rules.yaml)
// into a Prometheus rule file, timed as s says. An alert named in s.For
// that the manifest lacks is an error: the test would otherwise wait for
// an alert that cannot fire.
func RuleFile(manifest []byte, s Shortened) ([]byte, error) {
	var pr monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(manifest, &pr); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out ruleFile
	for _, g := range pr.Spec.Groups {
		rg := ruleGroup{Name: g.Name}
		if g.Interval != nil {
			rg.Interval = string(*g.Interval)
		}
		if s.Evaluation > 0 {
			rg.Interval = s.Evaluation.String()
		}
		for _, r := range g.Rules {
			out := rule{Alert: r.Alert, Record: r.Record, Expr: r.Expr.String(), Labels: r.Labels, Annotations: r.Annotations}
			if r.For != nil {
				out.For = string(*r.For)
			}
			if d, ok := s.For[r.Alert]; ok && r.Alert != "" {
				out.For, seen[r.Alert] = d.String(), true
			}
			rg.Rules = append(rg.Rules, out)
		}
		out.Groups = append(out.Groups, rg)
	}
	for name := range s.For {
		if !seen[name] {
			return nil, fmt.Errorf("the rules have no alert %s", name)
		}
	}
	return yaml.Marshal(out)
}
