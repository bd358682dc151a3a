// Package promql checks every alert expression and every dashboard query
// with Prometheus's own PromQL parser, and every series name in them
// against what the project serves: the exporter's families
// (internal/exporter.Families) and the operator's (internal/metrics). It
// is its own module so that Prometheus's dependencies stay out of the
// operator's.
package promql
