package helm

import (
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
)

// TestChartLints: `helm lint --strict` (Helm's own checks of Chart.yaml,
// the templates and the values against the schema) finds nothing, not
// even a warning, at the defaults and in namespaced mode. Careless
// variant run: Chart.yaml "version: one" fails it ("version 'one' is not
// a valid SemVer").
func TestChartLints(t *testing.T) {
	for _, vals := range []map[string]any{nil, {"watchNamespaces": []any{"apps"}}} {
		lint := action.NewLint()
		lint.Strict = true
		res := lint.Run([]string{filepath.Join(root, "charts", "kubenats")}, vals)
		for _, m := range res.Messages {
			if m.Severity < support.WarningSev {
				continue // advice only, such as "icon is recommended"
			}
			t.Errorf("helm lint (values %v): %s", vals, m)
		}
		for _, err := range res.Errors {
			t.Errorf("helm lint (values %v): %v", vals, err)
		}
	}
}
