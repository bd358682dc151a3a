package exporter

import (
	"testing"
	"time"
)

// TestScrapeBudget: a scrape reads the server for less than its scraper
// waits. Careless variant watched failing: the collector's fixed 10 s
// whatever the header says, which is exactly Prometheus's default
// scrape_timeout (a hung server's scrape then fails instead of reporting
// the server down).
func TestScrapeBudget(t *testing.T) {
	const max = 10 * time.Second
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"10", 8 * time.Second},
		{"5", 4 * time.Second},
		{"3", 2 * time.Second},
		{"2", time.Second},
		{"1", 500 * time.Millisecond},
		{"60", max},
		{"", max},
		{"0", max},
		{"-3", max},
		{"NaN", max},
		{"ten", max},
	} {
		if got := scrapeBudget(tc.header, max); got != tc.want {
			t.Errorf("scrapeBudget(%q) = %s, want %s", tc.header, got, tc.want)
		}
	}
}
