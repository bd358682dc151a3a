package natsmon

import "time"

// The operator's own picture of a server's /jsz: exactly the fields the
// settle verdict, the placements and the scale-down read, and nothing else.
// nats-server's types (server.JSInfo and what it holds) carry every field
// the server reports, are hundreds of bytes per element, and link the whole
// server into the operator; these are values without pointers where they
// can be, so that a view costs what it holds. JSON names are nats-server's
// (server/monitor.go, server/stream.go in v2.15).

// JSInfo is one server's JetStream view.
type JSInfo struct {
	// Meta is the meta group as this server sees it; nil when the server
	// did not report one (not clustered, or JetStream off).
	Meta *MetaGroup
	// Accounts are the accounts with JetStream on this server, with the
	// streams it hosts.
	Accounts []Account
}

// MetaGroup is the JetStream meta group ("meta_cluster").
type MetaGroup struct {
	Leader string
	// Replicas are the members other than the leader, as reported.
	Replicas []Peer
}

// Account is one entry of "account_details".
type Account struct {
	Name    string
	Streams []Stream
}

// Stream is one entry of "stream_detail".
type Stream struct {
	Name string
	// Replicas is config.num_replicas (0 when not reported).
	Replicas int
	Cluster  *Group
	// Messages is state.messages, as this server holds the stream.
	Messages  uint64
	Consumers []Consumer
	// RequiredLevel is the JetStream API level its configuration needs
	// (config.metadata "_nats.req.level"; 0 when not recorded).
	RequiredLevel int
	// DiscardNewSchedules: config has allow_msg_schedules and
	// `discard: new`, which nats-server 2.14 and later refuse.
	DiscardNewSchedules bool
}

// Consumer is one entry of "consumer_detail".
type Consumer struct {
	Name string
	// Replicas is config.num_replicas (0: its stream's).
	Replicas int
	Cluster  *Group
	// RequiredLevel is as a Stream's.
	RequiredLevel int
}

// Group is a stream's or consumer's Raft group ("cluster").
type Group struct {
	Leader   string
	Replicas []Peer
	// Moving: the server reports a desired peer set ("desired"), so that a
	// change of the group's peers is in flight.
	Moving bool
}

// Peer is one replica of a Raft group.
type Peer struct {
	Name    string
	Current bool
	Offline bool
	// Active is how long ago the leader last heard from it.
	Active time.Duration
	// Lag is how many entries it is behind.
	Lag uint64
}
