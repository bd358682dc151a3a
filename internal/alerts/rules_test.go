package alerts

import (
	"strings"
	"testing"
)

// TestScoped: a per-cluster rule selects that cluster only; the shipped
// rule selects every cluster. Careless variant watched failing: a scope
// that drops the natscluster matcher makes one cluster's alert fire for
// every cluster of the namespace.
func TestScoped(t *testing.T) {
	for _, tc := range []struct {
		expr, ns, cluster, want string
	}{
		{`up{` + scope + `} == 0`, "a", "b", `up{namespace="a",natscluster="b"} == 0`},
		{`up{` + scope + `} == 0`, "", "", `up == 0`},
		{`x{type="Ready"` + sep + scope + `} == 1`, "a", "b", `x{type="Ready",namespace="a",natscluster="b"} == 1`},
		{`x{type="Ready"` + sep + scope + `} == 1`, "", "", `x{type="Ready"} == 1`},
	} {
		if got := Scoped(tc.expr, tc.ns, tc.cluster); got != tc.want {
			t.Errorf("Scoped(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// TestEveryRuleIsComplete: each alert has a for, a severity, a summary
// and a description; a per-cluster group names its cluster in every
// expression.
func TestEveryRuleIsComplete(t *testing.T) {
	for _, g := range Groups("team-a", "orders") {
		for _, r := range g.Rules {
			if r.For == nil || *r.For == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s is incomplete: %+v", r.Alert, r)
			}
			if !strings.Contains(r.Expr.String(), `natscluster="orders"`) {
				t.Errorf("%s does not select its cluster: %s", r.Alert, r.Expr.String())
			}
		}
	}
	if n, all := len(Groups("a", "b")[0].Rules), len(Groups("", "")[0].Rules); n >= all {
		t.Errorf("per-cluster group has %d rules, the shipped one %d: the operator's own rule belongs to the shipped one only", n, all)
	}
}
