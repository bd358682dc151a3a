package exporter

import (
	"strconv"
	"time"
)

// scrapeTimeoutHeader is where Prometheus says how long it waits for a
// scrape (its scrape_timeout, 10 s unless set).
const scrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// scrapeBudget is how long one scrape may spend reading the server: less
// than the scraper waits, so that the answer, with a hung server's
// kubenats_exporter_server_up 0 in it, arrives before the scraper gives
// up. A scrape that times out records no sample at all, and an alert on
// server_up == 0 would then never see the hung server. The margin is a
// fifth of the timeout, at least a second (for the answer to be written
// and sent on a busy node), and the budget at least half the timeout; at
// most max (the collector's own timeout), and max when the header is
// missing or not a positive number of seconds.
func scrapeBudget(header string, max time.Duration) time.Duration {
	seconds, err := strconv.ParseFloat(header, 64)
	if err != nil || !(seconds > 0) {
		return max
	}
	timeout := time.Duration(seconds * float64(time.Second))
	margin := timeout / 5
	if margin < time.Second {
		margin = time.Second
	}
	budget := timeout - margin
	if budget < timeout/2 {
		budget = timeout / 2
	}
	return min(budget, max)
}
