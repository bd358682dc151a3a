package manager

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
)

// The names of the metrics certificate's files in MetricsCertDir: those of
// a kubernetes.io/tls Secret mounted as a volume.
const (
	metricsCertFile = "tls.crt"
	metricsKeyFile  = "tls.key"
)

// checkMetricsCert refuses a metrics certificate directory the server
// could not serve from. controller-runtime falls back to a self-signed
// certificate when the files are missing, so a Secret mounted at the wrong
// path would otherwise go unnoticed until Prometheus, which verifies the
// certificate, stops scraping. The files are watched once serving, so a
// renewed certificate is served without a restart.
func checkMetricsCert(o Options) error {
	if o.MetricsCertDir == "" || o.InsecureMetrics || !metricsEnabled(o) {
		return nil
	}
	cert, key := filepath.Join(o.MetricsCertDir, metricsCertFile), filepath.Join(o.MetricsCertDir, metricsKeyFile)
	if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
		return fmt.Errorf("--metrics-cert-dir: the metrics certificate cannot be served: %w", err)
	}
	return nil
}

// metricsEnabled: an address other than "" and "0".
func metricsEnabled(o Options) bool {
	return o.MetricsBindAddress != "" && o.MetricsBindAddress != "0"
}
