package jetstream

import (
	"bytes"
	"errors"
	"fmt"
)

// What the operator accepts from a NATS server, whoever runs it. nats.go
// v1.55 trusts the server: it grows a control line (INFO, MSG arguments,
// -ERR) until a newline comes, and allocates a message's payload at the size
// the MSG or HMSG line states, in its read loop, where a failed allocation
// kills the whole process. So the bytes are checked before nats.go sees
// them (protoScanner), and a connection that breaks a limit is closed.
const (
	// maxProtoLine bounds one control line. The longest real one is INFO,
	// whose connect_urls grow with the cluster: some 100 bytes a server.
	maxProtoLine = 64 << 10
	// maxMsgSize bounds one message, headers included. The operator reads
	// JetStream API replies and advisories, a few KiB each; nats-server's
	// own default max_payload is 1 MiB.
	maxMsgSize = 8 << 20
	// maxSizeDigits: a size of more digits would overflow nats.go's parser,
	// which wraps around instead of failing.
	maxSizeDigits = 10
)

var (
	errLineTooLong = fmt.Errorf("the server sent a protocol line longer than %d bytes", maxProtoLine)
	errMsgTooLarge = fmt.Errorf("the server announced a message larger than %d bytes", maxMsgSize)
	errBadMsgLine  = errors.New("the server sent a malformed MSG line")
)

// protoScanner follows the server-to-client half of the NATS protocol as
// nats.go's parser reads it (parser.go): control lines end at '\n'; a MSG
// or HMSG line is followed by the payload of the size it states, and then
// by whatever comes up to the next '\n'. It keeps nothing but the current
// line, so its memory is bounded by maxProtoLine.
type protoScanner struct {
	line    []byte
	payload int // payload bytes still to pass
	// msgEnd: the payload has passed; nats.go skips to the next '\n'.
	msgEnd  bool
	skipped int // bytes skipped since the payload ended
}

// feed checks the next bytes of the stream.
func (s *protoScanner) feed(b []byte) error {
	for len(b) > 0 {
		if s.payload > 0 {
			n := min(len(b), s.payload)
			s.payload -= n
			b = b[n:]
			continue
		}
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if len(s.line)+s.skipped+len(chunk) > maxProtoLine {
			return errLineTooLong
		}
		if s.msgEnd {
			s.skipped += len(chunk)
		} else {
			s.line = append(s.line, chunk...)
		}
		if i < 0 {
			return nil
		}
		b = b[i+1:]
		if s.msgEnd {
			s.msgEnd, s.skipped = false, 0
			continue
		}
		size, err := msgSize(s.line)
		s.line = s.line[:0]
		if err != nil {
			return err
		}
		if size >= 0 {
			s.payload, s.msgEnd = size, true
		}
	}
	return nil
}

// msgSize returns the payload size a MSG or HMSG line states, or -1 for
// any other line.
func msgSize(line []byte) (int, error) {
	var args [][]byte
	var withHeaders bool
	switch {
	case hasOp(line, "msg"):
		args = protoFields(line[len("msg"):])
	case hasOp(line, "hmsg"):
		args, withHeaders = protoFields(line[len("hmsg"):]), true
	default:
		return -1, nil
	}
	// MSG <subject> <sid> [reply] <size>
	// HMSG <subject> <sid> [reply] <header size> <total size>
	minArgs := 3
	if withHeaders {
		minArgs = 4
	}
	if len(args) != minArgs && len(args) != minArgs+1 {
		return 0, errBadMsgLine
	}
	total, ok := parseSize(args[len(args)-1])
	if !ok {
		return 0, errBadMsgLine
	}
	if withHeaders {
		hdr, ok := parseSize(args[len(args)-2])
		if !ok || hdr > total {
			return 0, errBadMsgLine
		}
	}
	if total > maxMsgSize {
		return 0, errMsgTooLarge
	}
	return total, nil
}

// hasOp reports whether line starts with op (any letter case, as nats.go
// reads it) followed by a space or a tab.
func hasOp(line []byte, op string) bool {
	return len(line) > len(op) && bytes.EqualFold(line[:len(op)], []byte(op)) &&
		(line[len(op)] == ' ' || line[len(op)] == '\t')
}

// protoFields splits arguments where nats.go does: spaces, tabs and '\r'.
func protoFields(b []byte) [][]byte {
	return bytes.FieldsFunc(b, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
}

// parseSize reads a decimal size, refusing what nats.go would misread.
func parseSize(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > maxSizeDigits {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
