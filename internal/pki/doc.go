// Package pki keeps the per-cluster route CA: it makes a CA and the route
// certificates it signs, reads them back from PEM, and decides (purely,
// from what it is shown and the time) when a certificate must be renewed.
package pki
