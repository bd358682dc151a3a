package exporter

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector reads its server at every scrape and serves what it read. It
// keeps no samples between scrapes: a stream deleted is gone at the next
// scrape, a leader moved away stops being served here at once.
type Collector struct {
	id      Identity
	fetch   Fetcher
	limit   int
	timeout time.Duration
	descs   map[string]*prometheus.Desc

	mu      sync.Mutex // one scrape at a time: the counters below, and the server's CPU
	dropped float64
	errors  map[string]float64
}

// NewCollector serves id's server, read through fetch, with at most limit
// stream and consumer series per scrape.
func NewCollector(id Identity, fetch Fetcher, limit int) *Collector {
	c := &Collector{id: id, fetch: fetch, limit: limit, timeout: 10 * time.Second,
		descs: map[string]*prometheus.Desc{}, errors: map[string]float64{}}
	for _, f := range families {
		c.descs[f.Name] = prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
	}
	return c
}

// Describe implements prometheus.Collector: every family of Families.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families {
		ch <- c.descs[f.Name]
	}
}

// Collect implements prometheus.Collector, reading the server for at most
// the collector's own timeout. Handler reads it within the scraper's
// budget instead (scrapeWithin).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	c.collect(ctx, ch)
}

// collect reads the server until ctx ends and sends what it read.
func (c *Collector) collect(ctx context.Context, ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.scrape(ctx) {
		c.emit(ch, prometheus.GaugeValue, s)
	}
	own := []string{c.id.Server, c.id.Server, c.id.Namespace, c.id.NatsCluster}
	c.emit(ch, prometheus.CounterValue, Sample{Name: FamilySeriesDropped, Labels: own, Value: c.dropped})
	for _, endpoint := range []string{"varz", "healthz", "jsz", "accountz"} {
		c.emit(ch, prometheus.CounterValue, Sample{Name: FamilyScrapeErrors, Labels: insert(own, endpoint), Value: c.errors[endpoint]})
	}
}

// scrape reads the endpoints and returns the gauges, bounded.
func (c *Collector) scrape(ctx context.Context) []Sample {
	own := []string{c.id.Server, c.id.Server, c.id.Namespace, c.id.NatsCluster}
	var varz Varz
	if err := c.fetch.Fetch(ctx, VarzPath, MaxVarzBody, false, &varz); err != nil {
		// The server does not answer: say so, and serve nothing that
		// would look like a value.
		c.errors["varz"]++
		return []Sample{{Name: FamilyServerUp, Labels: own, Value: 0}, HealthzSample(c.id, nil)}
	}
	out := append(VarzSamples(c.id, varz), Sample{Name: FamilyServerUp, Labels: own, Value: 1})
	var health Healthz
	if err := c.fetch.Fetch(ctx, HealthzPath, MaxHealthzBody, true, &health); err != nil {
		c.errors["healthz"]++
		out = append(out, HealthzSample(c.id, nil))
	} else {
		out = append(out, HealthzSample(c.id, &health))
	}
	var jsz JSZ
	if err := c.fetch.Fetch(ctx, JSZPath, MaxJSZBody, false, &jsz); err != nil {
		c.errors["jsz"]++
		return out
	}
	server, groups := JSZSamples(c.id, jsz)
	kept, dropped := Bound(groups, c.limit)
	c.dropped += float64(dropped)
	out = append(append(out, server...), kept...)
	return append(out, c.accountLimits(ctx, jsz)...)
}

// accountLimits reads the limits of the accounts limitReads names, one
// /accountz each. An account that cannot be read serves no limit and is
// counted; the others still serve theirs.
func (c *Collector) accountLimits(ctx context.Context, jsz JSZ) []Sample {
	read, dropped := limitReads(c.id.Server, jsz)
	c.dropped += float64(dropped)
	var out []Sample
	for i, a := range read {
		if ctx.Err() != nil {
			// The scrape's budget is spent: what is left waits for the
			// next scrape, counted, rather than failing one by one.
			c.dropped += float64(len(read) - i)
			break
		}
		var l AccountLimits
		if err := c.fetch.Fetch(ctx, AccountzPath(a), MaxAccountzBody, false, &l); err != nil {
			c.errors["accountz"]++
			continue
		}
		out = append(out, AccountLimitSamples(c.id, jsz, a, l)...)
	}
	return out
}

// emit sends s; a label value Prometheus refuses (a stream name that is
// not UTF-8) drops that series and counts it.
func (c *Collector) emit(ch chan<- prometheus.Metric, kind prometheus.ValueType, s Sample) {
	m, err := prometheus.NewConstMetric(c.descs[s.Name], kind, s.Value, s.Labels...)
	if err != nil {
		c.dropped++
		return
	}
	ch <- m
}
