// Package jsonread reads one JSON document from a stream, piece by piece,
// as its caller asks: it keeps nothing it was not asked for. It is how
// every body a NATS server sends is read, by the operator (natsmon) and by
// the metrics container (exporter): a monitor body or a system account
// reply is untrusted, and the byte cap alone does not bound the memory a
// general decoder spends on it: encoding/json into nats-server's own types
// turns each `{}` of a 1 MiB stream_detail into a 320-byte struct
// (~270 MB). Here an unknown field is skipped byte by byte without being
// built, a kept array is refused past a count its caller chose, and
// nesting is refused past maxDepth, so the memory a read holds is its
// small result and a 4 KiB buffer. It imports nothing of nats-server's.
package jsonread
