//go:build tools

// Package prometheus pins the Prometheus server the end-to-end tests and the
// scrape-cost benchmark run. It lives in its own module: Prometheus brings
// its own Kubernetes client and a long list of service-discovery SDKs that
// the operator's dependency graph must not carry.
package prometheus

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
)
