// Package upstream gives the tests what the projects kubenats replaces
// write: a release of the official NATS Helm chart as rendered, and NACK's
// example manifests.
//
// A plain clone has neither beside it (the official chart is on no
// registry reachable here, and the module proxy refuses NACK's module), so
// by default the tests read stand-ins the project writes itself: a
// chart-shaped release rendered by ChartRelease from the chart's
// documented layout, and NACK-shaped examples in nack/ covering the same
// features as NACK's published ones. Neither is copied from upstream.
//
// With KUBENATS_UPSTREAM_FIXTURES set to a directory of the real files
// (nats-chart/ and nack/, which only CI has), the same tests read
// those instead (`make test-upstream`, an extra step of .ci/run, builds
// the comparisons with the tag upstream). The
// stand-ins' own tests then also hold them against the real files, so
// that a stand-in that drifts from what upstream writes is caught.
package upstream
