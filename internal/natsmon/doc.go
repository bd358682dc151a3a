// Package natsmon reads the servers' own monitoring endpoint (/jsz,
// /varz, /routez on the monitor port) and their system account answers,
// and decides from them whether a JetStream cluster is settled: every Raft
// group has a leader and every replica is online and current. The rollout
// and the scale-down gate on that one verdict.
//
// What a server sends is untrusted, and bounded in memory, not only in
// length: bodies are capped (body.go), read by a streaming reader that
// keeps only the fields the operator uses, in its own small types, with
// limits on counts, nesting and names (internal/jsonread, jsz_decode.go), and
// the bytes in flight over the whole process are budgeted (inflight.go).
// nats-server's own types are not used: the operator does not link the
// server.
package natsmon
