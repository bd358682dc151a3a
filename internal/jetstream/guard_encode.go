package jetstream

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// appendServerOp appends the canonical form of op to dst: the one framing
// nats.go's parser reads as intended, written by the guard from the
// decoded fields, never copied from the server. Upper-case words, single
// spaces, numbers without leading zeros, CRLF after every line and right
// after every payload (nats.go takes the byte after a payload unseen and
// skips to the next '\n': here those are exactly "\r\n").
func appendServerOp(dst []byte, op *serverOp) ([]byte, error) {
	switch op.kind {
	case opInfo:
		dst = append(dst, "INFO "...)
		// Compact writes the object anew without insignificant blanks
		// (and without the '\r' a server may have put among them).
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, op.arg); err != nil {
			return dst, errBadInfo
		}
		dst = buf.Bytes()
	case opMsg, opHMsg:
		if op.kind == opHMsg {
			dst = append(dst, "HMSG "...)
		} else {
			dst = append(dst, "MSG "...)
		}
		dst = append(dst, op.subject...)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, op.sid, 10)
		if op.reply != nil {
			dst = append(dst, ' ')
			dst = append(dst, op.reply...)
		}
		if op.kind == opHMsg {
			dst = append(dst, ' ')
			dst = strconv.AppendInt(dst, int64(op.hdrLen), 10)
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(len(op.payload)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, op.payload...)
	case opPing:
		dst = append(dst, "PING"...)
	case opPong:
		dst = append(dst, "PONG"...)
	case opOK:
		dst = append(dst, "+OK"...)
	case opErr:
		dst = append(dst, "-ERR "...)
		dst = append(dst, op.arg...)
	default:
		return dst, errUnknownOp
	}
	return append(dst, "\r\n"...), nil
}
