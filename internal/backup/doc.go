// Package backup takes JetStream's own snapshot of a stream (its
// messages, its configuration and its consumers' state) and restores one,
// through the library natscli uses (github.com/nats-io/jsm.go) and in the
// layout `nats stream backup` writes: a directory holding the archive the
// server sent (stream.arc.s2, or stream.tar.s2 from a server before 2.15)
// and backup.json (the stream's configuration and state when the snapshot
// began). A backup kubenats took restores with `nats stream restore`, and
// the other way round.
//
// A backup appears whole or not at all: it is written beside its place
// and moved there once every byte has arrived, so a failed or interrupted
// one is never read as a backup. Memory stays bounded while streaming:
// the server sends at most its flow-control window (8 MiB) before the
// client acknowledges, and a restore sends one 64 KiB chunk at a time.
package backup
