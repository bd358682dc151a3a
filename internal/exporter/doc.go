// Package exporter serves one nats-server's monitor endpoints as Prometheus
// series, under the names and labels prometheus-nats-exporter gives them
// when the official chart runs it (-prefix=nats), so that the dashboards
// NATS users already have keep working. It runs as `kubenats exporter` in a
// container of every server pod and reads its own server only, over the
// pod's loopback: each pod's series are scraped from the pod, in the
// cluster's namespace, and a reader of one namespace's targets sees no
// other namespace's servers.
//
// The work is split so that the part worth testing is pure:
//
//   - decode.go, read.go: the monitor JSON into small types of our own,
//     read from a body capped in bytes by the bounded streaming reader the
//     operator uses too (internal/jsonread), which counts what it keeps
//     (the server runs the tenant's image: its answers are untrusted);
//   - varz.go, jsz.go: those types into samples, pure functions;
//   - bound.go: the cardinality bound;
//   - families.go: every family served, the one list the collector
//     registers from and the dashboard and alert tests check against;
//   - collector.go, serve.go: the HTTP side.
//
// Differences from prometheus-nats-exporter, all deliberate: server_id
// carries the server's name (nats-server makes a new id at every start, so
// series labelled by it break at each restart); stream and consumer series
// come from the stream's or consumer's leader only (a follower's view lags,
// and every replica reporting would count each stream once per replica);
// every series carries namespace and natscluster; consumer_desc and
// consumer_created are not labels (free text and a timestamp, neither worth
// a series); and some families are kubenats additions (Family.Addition).
package exporter
