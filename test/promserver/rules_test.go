package promserver

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const manifest = `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: kubenats
spec:
  groups:
  - name: kubenats
    rules:
    - alert: NatsServerDown
      expr: kubenats_exporter_server_up == 0
      for: 2m
      labels:
        severity: critical
    - alert: NatsSlowConsumers
      expr: increase(nats_varz_slow_consumers[5m]) > 0
      for: 5m
`

// TestRuleFileShortensOnlyWhatItIsTold: the named alert's `for` and the
// group's interval change; the expressions, labels and the other alert's
// `for` stay as shipped. Careless variant watched failing: shortening
// every alert's `for`, which would hide a rule that fires only thanks to
// the test's timing.
func TestRuleFileShortensOnlyWhatItIsTold(t *testing.T) {
	out, err := RuleFile([]byte(manifest), Shortened{Evaluation: time.Second, For: map[string]time.Duration{"NatsServerDown": 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.UnmarshalStrict(out, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Groups) != 1 || f.Groups[0].Interval != "1s" || len(f.Groups[0].Rules) != 2 {
		t.Fatalf("groups %+v", f.Groups)
	}
	down, slow := f.Groups[0].Rules[0], f.Groups[0].Rules[1]
	if down.For != "10s" || down.Expr != "kubenats_exporter_server_up == 0" || down.Labels["severity"] != "critical" {
		t.Errorf("NatsServerDown %+v", down)
	}
	if slow.For != "5m" || !strings.Contains(slow.Expr, "nats_varz_slow_consumers") {
		t.Errorf("NatsSlowConsumers %+v", slow)
	}
}

// TestRuleFileRefusesAnUnknownAlert: shortening an alert the rules lack
// is an error, not a test that waits for nothing.
func TestRuleFileRefusesAnUnknownAlert(t *testing.T) {
	if _, err := RuleFile([]byte(manifest), Shortened{For: map[string]time.Duration{"NatsNoSuchAlert": time.Second}}); err == nil {
		t.Fatal("an unknown alert was accepted")
	}
}
