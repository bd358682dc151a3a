package jetstream

import (
	"bytes"
	"errors"
	"strconv"
)

// clientScan follows what nats.go writes on a pool connection, so that the
// guard knows which messages nats.go asked for: the subscriptions it made
// (SUB, UNSUB) and the reply subjects of the requests it sent (PUB, HPUB).
// These are the operator's own bytes, written by nats.go in its one
// framing; what the server sends is still decoded only by guard_parse.go.
// A line this scan cannot read fails the write: a guard that lost track of
// the framing would drop the replies it should admit.
type clientScan struct {
	// line holds a control line not yet ended; skip counts payload bytes
	// (and their CRLF) still to pass.
	line []byte
	skip int
}

var errClientLine = errors.New("the guard cannot read a protocol line nats.go wrote")

// clientOp is what one of nats.go's lines tells the guard.
type clientOp struct {
	kind  clientOpKind
	sid   uint64
	topic string // SUB: the subscription's subject; PUB: the reply subject
}

type clientOpKind uint8

const (
	clientOther clientOpKind = iota
	clientSub
	clientUnsub
	clientRequest
)

// scan reads p, calling each for every line that concerns deliveries.
func (s *clientScan) scan(p []byte, each func(clientOp)) error {
	for len(p) > 0 {
		if s.skip > 0 {
			n := min(s.skip, len(p))
			s.skip -= n
			p = p[n:]
			continue
		}
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			if len(s.line)+len(p) > maxProtoLine {
				return errClientLine
			}
			s.line = append(s.line, p...)
			return nil
		}
		line := p[:end+1]
		if len(s.line) > 0 {
			line = append(s.line, line...)
		}
		p = p[end+1:]
		op, payload, err := readClientLine(bytes.TrimRight(line, "\r\n"))
		s.line = s.line[:0]
		if err != nil {
			return err
		}
		s.skip = payload
		if op.kind != clientOther {
			each(op)
		}
	}
	return nil
}

// readClientLine reads one of nats.go's control lines: what it tells, and
// how many payload bytes follow it (CRLF included).
func readClientLine(line []byte) (clientOp, int, error) {
	f := bytes.Fields(line)
	if len(f) == 0 {
		return clientOp{}, 0, errClientLine
	}
	switch string(f[0]) {
	case "CONNECT", "PING", "PONG":
		return clientOp{}, 0, nil
	case "SUB": // SUB <subject> [queue] <sid>
		if len(f) != 3 && len(f) != 4 {
			return clientOp{}, 0, errClientLine
		}
		sid, err := strconv.ParseUint(string(f[len(f)-1]), 10, 64)
		return clientOp{kind: clientSub, sid: sid, topic: string(f[1])}, 0, err
	case "UNSUB": // UNSUB <sid> [max]: with a max, it ends later
		if len(f) != 2 && len(f) != 3 {
			return clientOp{}, 0, errClientLine
		}
		sid, err := strconv.ParseUint(string(f[1]), 10, 64)
		if len(f) == 3 {
			return clientOp{}, 0, err
		}
		return clientOp{kind: clientUnsub, sid: sid}, 0, err
	case "PUB", "HPUB": // PUB <subject> [reply] <size>, HPUB <subject> [reply] <hdr> <total>
		sizes := 1
		if f[0][0] == 'H' {
			sizes = 2
		}
		if len(f) != 2+sizes && len(f) != 3+sizes {
			return clientOp{}, 0, errClientLine
		}
		size, err := strconv.Atoi(string(f[len(f)-1]))
		if err != nil || size < 0 {
			return clientOp{}, 0, errClientLine
		}
		op := clientOp{}
		if len(f) == 3+sizes {
			op = clientOp{kind: clientRequest, topic: string(f[2])}
		}
		return op, size + 2, nil
	}
	return clientOp{}, 0, errClientLine
}
