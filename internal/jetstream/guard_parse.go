package jetstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The guard is the only parser of what a server sends. It decodes each
// operation here, within the limits of guard_limits.go, and nats.go reads
// only the canonical form guard_encode.go writes of it. A scanner that
// passed the server's bytes through would have to agree with nats.go's
// parser on every quirk (nats.go, after a payload, takes one byte without
// looking at it and skips to the next '\n'); a decoder that re-encodes
// cannot disagree, because nats.go never sees a framing it did not write.

// serverOpKind names the operations a server may send a client.
type serverOpKind uint8

const (
	opInfo serverOpKind = iota + 1
	opMsg
	opHMsg
	opPing
	opPong
	opOK
	opErr
)

// serverOp is one decoded operation. Its slices point into the bytes it
// was decoded from: encode it before those bytes are reused.
type serverOp struct {
	kind serverOpKind
	// MSG and HMSG: subject, subscription id, reply subject (nil when
	// there is none), and the payload, headers first (hdrLen bytes, HMSG).
	subject, reply []byte
	sid            uint64
	hdrLen         int
	payload        []byte
	// INFO: the JSON object; -ERR: the text, as the server quoted it.
	arg []byte
	// need, for a MSG or HMSG whose line is whole and whose payload is
	// not yet: how many bytes the operation takes in all.
	need int
}

var (
	errLineTooLong  = fmt.Errorf("the server sent a protocol line longer than %d bytes", maxProtoLine)
	errNoCRLF       = errors.New("the server ended a protocol line without CRLF")
	errUnknownOp    = errors.New("the server sent an operation a NATS server does not send")
	errBadMsgLine   = errors.New("the server sent a malformed MSG or HMSG line")
	errMsgTooLarge  = errors.New("the server announced a message larger than the guard accepts")
	errBadMsgEnd    = errors.New("the server did not end a message with CRLF right after its stated size")
	errBadHeaders   = errors.New("the server sent a malformed header block")
	errHeaderTooBig = fmt.Errorf("the server sent a header block of more than %d bytes or %d lines", maxHeaderBytes, maxHeaderLines)
	errBadInfo      = errors.New("the server sent an INFO that is not a JSON object")
	errBadErrText   = errors.New("the server sent an empty -ERR or one with control characters")
)

// parseServerOp decodes the operation at the start of b, refusing a
// message larger than maxMsg. It returns how many bytes the operation
// took; 0 and no error mean b does not hold a whole operation yet (and is
// still within the limits, so waiting for more is bounded): op.need then
// says how many it takes, once a message's line is whole.
func parseServerOp(b []byte, maxMsg int) (serverOp, int, error) {
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		if len(b) >= maxProtoLine {
			return serverOp{}, 0, errLineTooLong
		}
		return serverOp{}, 0, nil
	}
	if end+1 > maxProtoLine {
		return serverOp{}, 0, errLineTooLong
	}
	if end == 0 || b[end-1] != '\r' {
		return serverOp{}, 0, errNoCRLF
	}
	line := b[:end-1]
	lineLen := end + 1
	word, rest := cutWord(line)
	switch {
	case bytes.EqualFold(word, []byte("MSG")):
		return parseMsg(b, lineLen, rest, false, maxMsg)
	case bytes.EqualFold(word, []byte("HMSG")):
		return parseMsg(b, lineLen, rest, true, maxMsg)
	case bytes.EqualFold(word, []byte("PING")):
		return bareOp(opPing, rest, lineLen)
	case bytes.EqualFold(word, []byte("PONG")):
		return bareOp(opPong, rest, lineLen)
	case bytes.EqualFold(word, []byte("+OK")):
		return bareOp(opOK, rest, lineLen)
	case bytes.EqualFold(word, []byte("INFO")):
		arg := trimBlank(rest)
		// json.Valid refuses raw control characters in strings, so the
		// object cannot carry a line break into the re-encoded line.
		if len(arg) == 0 || arg[0] != '{' || !json.Valid(arg) {
			return serverOp{}, 0, errBadInfo
		}
		return serverOp{kind: opInfo, arg: arg}, lineLen, nil
	case bytes.EqualFold(word, []byte("-ERR")):
		text := trimBlank(rest)
		if len(text) == 0 || !printableText(text) {
			return serverOp{}, 0, errBadErrText
		}
		return serverOp{kind: opErr, arg: text}, lineLen, nil
	}
	return serverOp{}, 0, errUnknownOp
}

// bareOp is PING, PONG or +OK: nothing may follow the word but blanks.
func bareOp(kind serverOpKind, rest []byte, n int) (serverOp, int, error) {
	if len(trimBlank(rest)) != 0 {
		return serverOp{}, 0, errUnknownOp
	}
	return serverOp{kind: kind}, n, nil
}

// parseMsg decodes "MSG <subject> <sid> [reply] <size>" or "HMSG <subject>
// <sid> [reply] <header size> <total size>" (args, after the word), then
// the payload that follows the line in b and the CRLF that must follow it.
func parseMsg(b []byte, lineLen int, args []byte, withHeaders bool, maxMsg int) (serverOp, int, error) {
	var fields [6][]byte
	n := 0
	for {
		var f []byte
		f, args = cutWord(args)
		if len(f) == 0 {
			break
		}
		if n == len(fields) {
			return serverOp{}, 0, errBadMsgLine
		}
		fields[n] = f
		n++
	}
	sizes := 1
	if withHeaders {
		sizes = 2
	}
	if n != 2+sizes && n != 3+sizes {
		return serverOp{}, 0, errBadMsgLine
	}
	op := serverOp{kind: opMsg, subject: fields[0]}
	if withHeaders {
		op.kind = opHMsg
	}
	if n == 3+sizes {
		op.reply = fields[2]
		if !validToken(op.reply) {
			return serverOp{}, 0, errBadMsgLine
		}
	}
	sid, ok := parseDecimal(fields[1], maxSidDigits)
	if !ok || !validToken(op.subject) {
		return serverOp{}, 0, errBadMsgLine
	}
	op.sid = sid
	total, ok := parseDecimal(fields[n-1], maxSizeDigits)
	if !ok {
		return serverOp{}, 0, errBadMsgLine
	}
	if total > uint64(maxMsg) {
		return serverOp{}, 0, fmt.Errorf("%w (%d bytes, the limit is %d)", errMsgTooLarge, total, maxMsg)
	}
	if withHeaders {
		hdr, ok := parseDecimal(fields[n-2], maxSizeDigits)
		if !ok || hdr > total {
			return serverOp{}, 0, errBadMsgLine
		}
		if hdr > maxHeaderBytes {
			return serverOp{}, 0, errHeaderTooBig
		}
		op.hdrLen = int(hdr)
	}
	size := int(total)
	need := lineLen + size + 2
	if len(b) < need {
		return serverOp{kind: op.kind, need: need}, 0, nil
	}
	if b[lineLen+size] != '\r' || b[lineLen+size+1] != '\n' {
		return serverOp{}, 0, errBadMsgEnd
	}
	op.payload = b[lineLen : lineLen+size]
	if err := checkHeaders(op.payload[:op.hdrLen]); err != nil {
		return serverOp{}, 0, err
	}
	return op, need, nil
}

// checkHeaders checks an HMSG's header block: the NATS/1.0 status line,
// CRLF-ended lines, an empty line last, and at most maxHeaderLines lines.
// An empty block (header size 0) is no header at all.
func checkHeaders(h []byte) error {
	if len(h) == 0 {
		return nil
	}
	if !bytes.HasPrefix(h, []byte("NATS/1.0")) || !bytes.HasSuffix(h, []byte("\r\n\r\n")) {
		return errBadHeaders
	}
	if bytes.Count(h, []byte("\n")) > maxHeaderLines {
		return errHeaderTooBig
	}
	return nil
}

// cutWord returns the first run of non-blank bytes of b and what follows
// it. Blanks are spaces and tabs, as between NATS protocol arguments.
func cutWord(b []byte) (word, rest []byte) {
	i := 0
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isBlank(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func trimBlank(b []byte) []byte {
	return bytes.TrimFunc(b, func(r rune) bool { return r == ' ' || r == '\t' })
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// validToken: a subject or reply subject is 1 to maxTokenLen bytes of
// UTF-8 with no control character (none is a separator nats.go splits on:
// '\r' and '\n' included) and no blank (cutWord has split on those).
func validToken(t []byte) bool {
	return len(t) > 0 && len(t) <= maxTokenLen && printableText(t)
}

// printableText: valid UTF-8 without control characters (C0, DEL, C1).
func printableText(t []byte) bool {
	for len(t) > 0 {
		r, size := utf8.DecodeRune(t)
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return false
		}
		t = t[size:]
	}
	return true
}

// parseDecimal reads 1 to maxDigits decimal digits, no sign, no other byte.
func parseDecimal(b []byte, maxDigits int) (uint64, bool) {
	if len(b) == 0 || len(b) > maxDigits {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
