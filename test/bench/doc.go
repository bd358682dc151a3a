// Package bench measures the operator against floors taken in the same run
// on the same machine. `make bench` runs it; figures are reported as
// benchmark metrics, never asserted as timings.
package bench
