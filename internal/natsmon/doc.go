// Package natsmon reads the servers' own monitoring endpoint (/jsz and
// /varz on the monitor port, bodies capped: body.go) and decides from it whether a JetStream cluster is settled:
// every Raft group has a leader and every replica is online and current.
// The rollout and any future scale-down gate on that one verdict.
package natsmon
