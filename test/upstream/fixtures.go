package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Env names the directory of the real upstream files, unset for the
// stand-ins.
const Env = "KUBENATS_UPSTREAM_FIXTURES"

// Where the real files lie under Env's directory.
const (
	upstreamChart = "nats-chart/nats-" + ChartVersion + "-jetstream-3.yaml"
	upstreamNACK  = "nack"
)

// dir is Env's directory, "" when unset. A value set but unusable fails
// the test: a check asked for against the real files must never pass on
// the stand-ins instead.
func dir(t testing.TB) string {
	t.Helper()
	d := os.Getenv(Env)
	if d == "" {
		return ""
	}
	if !filepath.IsAbs(d) {
		t.Fatalf("%s=%s: give an absolute path (tests run in their packages' directories)", Env, d)
	}
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	return d
}

// Real reports whether the tests read the real upstream files.
func Real() bool { return os.Getenv(Env) != "" }

// Edit replaces the one occurrence of old in text with new, and fails the
// test when old is not there: an edit that silently found nothing would
// leave a test checking the unedited release.
func Edit(t testing.TB, text, old, new string) string {
	t.Helper()
	if n := strings.Count(text, old); n != 1 {
		t.Fatalf("the text to edit holds %d occurrences of %q, want 1", n, old)
	}
	return strings.Replace(text, old, new, 1)
}
