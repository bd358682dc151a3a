package jetstream

// What the guard accepts from a NATS server, whoever runs it. nats.go
// v1.55 trusts the server: it grows a control line until a newline comes,
// allocates a message's payload at the size the MSG or HMSG line states in
// its read loop (where a failed allocation kills the whole process), and
// turns every header line into a map entry. The guard decodes the stream
// itself (guard_parse.go) within these bounds, and nats.go only ever reads
// what the guard wrote (guard_encode.go).
//
// Header limits live here, with the rest of the guard's: the message
// limits of internal/jetstream/limits.go (another branch) are reconciled
// with these at merge.
const (
	// maxProtoLine bounds one control line, CRLF included. The longest
	// real one is INFO, whose connect_urls grow with the cluster: some 100
	// bytes a server.
	maxProtoLine = 64 << 10

	// maxAPIReply bounds one message on the connections the pool keeps for
	// Stream, Consumer, KeyValue and ObjectStore objects. What comes back
	// on them is a JetStream API reply (stream or consumer info, create,
	// update, delete) or an advisory. The largest is a stream's info, which
	// is its config (the operator writes at most 16 subjects of 512 bytes,
	// and any config had to fit in the server's max_payload to be created,
	// 1 MiB by default: nats-server's MAX_PAYLOAD_SIZE) plus a state and
	// cluster block of under 2 KiB. The operator asks for no stream list
	// (whose pages of 256 infos could be larger) and for no subject or
	// deleted-sequence details. 1 MiB is the size nats-server itself
	// refuses to accept beyond by default.
	maxAPIReply = 1 << 20

	// MaxSystemReply bounds one message on the system account's short
	// connections that ping every server (Connect): a server's answer to
	// $SYS.REQ.SERVER.PING.JSZ with accounts, streams, consumers, config
	// and Raft groups, about 3 KiB a stream. nats-server sends its own
	// internal replies without the max_payload check, so the bound is the
	// one the operator keeps for the same view read from the monitor port
	// (natsmon's maxJSZBody, 16 MiB: some 5000 streams). These connections
	// go only to the pods of a cluster the operator runs, one at a time,
	// and such a message is paid for in the memory budget before it is
	// read (guard_budget.go): twice its size, which the default budget's
	// half for a namespace holds.
	MaxSystemReply = 16 << 20

	// maxHeaderBytes bounds an HMSG's header block. nats-server's own
	// headers on what the operator reads (a status line such as "NATS/1.0
	// 408 Request Timeout", Nats-Pending-Messages, the advisory's
	// Nats-Expected-* echoes) take a few hundred bytes; 64 KiB leaves room
	// for any header a JetStream reply carries and keeps the map nats.go
	// builds small.
	maxHeaderBytes = 64 << 10
	// maxHeaderLines bounds the lines of a header block, the status line
	// and the final empty line included. Each line becomes a key or a value
	// in nats.go's nats.Header map: 8 MiB of short lines would be over a
	// million keys. nats-server's replies carry fewer than ten.
	maxHeaderLines = 128

	// maxTokenLen bounds a subject or a reply subject. nats-server accepts
	// no protocol line from a client longer than max_control_line (4 KiB
	// by default, MAX_CONTROL_LINE_SIZE), so no subject it delivers is
	// longer.
	maxTokenLen = 4 << 10
	// maxSidDigits: nats.go reads a subscription id as an int64 and wraps
	// around past 19 digits; its own ids count up from 1.
	maxSidDigits = 18
	// maxSizeDigits: enough for MaxSystemReply and no more, so that no
	// size overflows while it is read.
	maxSizeDigits = 9
)
