package exporter

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxScrapesInFlight: two scrapes at most run at once (two Prometheus
// replicas); more are refused rather than multiply the reads of the server.
const maxScrapesInFlight = 2

// Handler serves c as Prometheus text on /metrics, and /healthz for the
// container's probe. Each scrape reads the server within the time its
// scraper gives it (scrapeBudget) and stops when the scraper hangs up.
func Handler(c *Collector) http.Handler {
	inFlight := make(chan struct{}, maxScrapesInFlight)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		default:
			http.Error(w, "too many scrapes at once", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), scrapeBudget(r.Header.Get(scrapeTimeoutHeader), c.timeout))
		defer cancel()
		// A registry per scrape carries the scrape's context to the
		// collector; registering describes ~100 families, microseconds
		// beside the read of /jsz.
		reg := prometheus.NewRegistry()
		reg.MustRegister(scrapeWithin{c: c, ctx: ctx})
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

// scrapeWithin is c, read until ctx ends.
type scrapeWithin struct {
	c   *Collector
	ctx context.Context
}

func (s scrapeWithin) Describe(ch chan<- *prometheus.Desc) { s.c.Describe(ch) }
func (s scrapeWithin) Collect(ch chan<- prometheus.Metric) { s.c.collect(s.ctx, ch) }

// Serve serves h on addr until ctx ends.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
