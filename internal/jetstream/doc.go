// Package jetstream is the operator's side of NATS: the connection pool
// every JetStream resource shares, the advisories that reveal drift, the
// pure translation between specs and server configs, and the four kinds'
// server calls.
package jetstream
