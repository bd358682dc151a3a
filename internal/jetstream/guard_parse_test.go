package jetstream

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// transcribe runs stream through a protoStream that has seen INFO, in
// chunks of chunk bytes, and returns what nats.go would read.
func transcribe(stream string, chunk int, maxMsg int) (string, error) {
	s := protoStream{maxMsg: maxMsg, infoSeen: true}
	var out bytes.Buffer
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		s.feed([]byte(stream[:n]))
		stream = stream[n:]
		if err := s.decode(); err != nil {
			return out.String(), err
		}
		for s.pending() {
			p := make([]byte, 7)
			out.Write(p[:s.read(p)])
		}
	}
	if len(s.in) > 0 {
		return out.String(), errIncomplete
	}
	return out.String(), nil
}

var errIncomplete = errors.New("the stream ended inside an operation")

// TestGuardReencodes: what passes is the guard's own canonical form,
// whatever framing the server used, however the reads split it. Catches
// a guard that copies the server's bytes through once it has checked
// them (the lower-case op, the tabs and leading zeros would reach nats.go).
func TestGuardReencodes(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ordinary traffic", "PONG\r\n+OK\r\nPING\r\nMSG a 1 5\r\nhello\r\n", "PONG\r\n+OK\r\nPING\r\nMSG a 1 5\r\nhello\r\n"},
		{"a reply subject", "MSG _INBOX.x 2 $JS.ACK.S.C.1 2\r\nhi\r\n", "MSG _INBOX.x 2 $JS.ACK.S.C.1 2\r\nhi\r\n"},
		{"headers", "HMSG a 1 _INBOX.r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n", "HMSG a 1 _INBOX.r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"},
		{"lower case, tabs, leading zeros", "msg\ta\t001\t03 \r\nabc\r\n", "MSG a 1 3\r\nabc\r\n"},
		{"INFO as nats-server writes it, with a trailing blank", "INFO {\"a\": 1,\r \"b\": [1, 2]} \r\n", "INFO {\"a\":1,\"b\":[1,2]}\r\n"},
		{"a payload holding protocol text", "MSG a 1 24\r\nMSG a 1 999999999999\r\nxx\r\n", "MSG a 1 24\r\nMSG a 1 999999999999\r\nxx\r\n"},
		{"a payload of newlines", "MSG a 1 4\r\n\n\n\n\n\r\nPING\r\n", "MSG a 1 4\r\n\n\n\n\n\r\nPING\r\n"},
		{"an empty payload", "MSG a 1 0\r\n\r\n", "MSG a 1 0\r\n\r\n"},
		{"-ERR", "-ERR  'Authorization Violation' \r\n", "-ERR 'Authorization Violation'\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{1, 3, len(tc.in)} {
				got, err := transcribe(tc.in, chunk, maxAPIReply)
				if err != nil || got != tc.want {
					t.Fatalf("chunks of %d: got %q, %v; want %q", chunk, got, err, tc.want)
				}
			}
		})
	}
}

// TestGuardRefuses: each framing or limit a real server never breaks
// closes the connection. The careless variant each catches is named.
func TestGuardRefuses(t *testing.T) {
	long := strings.Repeat("a", maxProtoLine)
	manyLines := "NATS/1.0\r\n" + strings.Repeat("K: v\r\n", maxHeaderLines) + "\r\n"
	for _, tc := range []struct {
		name, in string
		want     error
	}{
		// The hole of issue 17: one byte then '\n' after a payload. nats.go
		// skips the next line as the end of the message, a scanner that
		// skipped to the '\n' reads it as a MSG line: they part ways.
		{"one byte other than CR after a payload", "MSG a 1 1\r\nx\nMSG a 1 26\r\nMSG a 1 1000000000000000\r\n\r\n", errBadMsgEnd},
		{"LF straight after a payload", "MSG a 1 1\r\nx\n\r\n", errBadMsgEnd},
		{"CR then another byte after a payload", "MSG a 1 1\r\nxxx\r\n", errBadMsgEnd},
		{"nothing but LF ending a line", "PING\n", errNoCRLF},
		{"a bare LF", "\n", errNoCRLF},
		// A guard that took any first word as nats.go's "P" state does.
		{"PING with more on its line", "PING PONG\r\n", errUnknownOp},
		{"PINGx", "PINGx\r\n", errUnknownOp},
		{"an unknown op", "SUB a 1\r\n", errUnknownOp},
		// Sizes: a guard that checked only the cap, or parsed with wrap-around.
		{"a size of 10^15", "MSG a 1 1000000000000000\r\n", errBadMsgLine},
		{"a size just over the cap", "MSG a 1 1048577\r\n", errMsgTooLarge},
		{"a size nats.go would wrap around", "MSG a 1 18446744073709551617\r\n", errBadMsgLine},
		{"a negative size", "MSG a 1 -5\r\n", errBadMsgLine},
		{"a size with a sign", "MSG a 1 +5\r\nhello\r\n", errBadMsgLine},
		{"no size", "MSG a 1\r\n", errBadMsgLine},
		{"too many fields", "MSG a 1 r x 5\r\nhello\r\n", errBadMsgLine},
		{"a sid that is not a number", "MSG a x 1\r\nh\r\n", errBadMsgLine},
		{"a sid nats.go would wrap around", "MSG a 99999999999999999999 1\r\nh\r\n", errBadMsgLine},
		{"a control character in a subject", "MSG a\x01b 1 1\r\nh\r\n", errBadMsgLine},
		{"a CR inside a MSG line", "MSG a\rb 1 1\r\nh\r\n", errBadMsgLine},
		{"a subject that is not UTF-8", "MSG a\xffb 1 1\r\nh\r\n", errBadMsgLine},
		{"a subject over the bound", "MSG " + strings.Repeat("s", maxTokenLen+1) + " 1 1\r\nh\r\n", errBadMsgLine},
		{"HMSG total over the cap", "HMSG a 1 10 9999999\r\n", errMsgTooLarge},
		{"HMSG headers beyond the total", "HMSG a 1 20 10\r\n", errBadMsgLine},
		{"HMSG with one size", "HMSG a 1 10\r\n", errBadMsgLine},
		// Headers: a guard that bounded the total only.
		{"HMSG headers over their bound", "HMSG a 1 70000 70000\r\n", errHeaderTooBig},
		{"HMSG with too many header lines", "HMSG a 1 " + strconv.Itoa(len(manyLines)) + " " + strconv.Itoa(len(manyLines)) + "\r\n" + manyLines + "\r\n", errHeaderTooBig},
		{"HMSG headers without the status line", "HMSG a 1 6 6\r\nK: v\r\n\r\n", errBadHeaders},
		{"HMSG headers without the empty line", "HMSG a 1 10 10\r\nNATS/1.0\r\n\r\n", errBadHeaders},
		// INFO: a guard that passed any INFO line on.
		{"INFO that is not JSON", "INFO {\r\n", errBadInfo},
		{"INFO that is an array", "INFO [1]\r\n", errBadInfo},
		{"INFO with nothing", "INFO\r\n", errBadInfo},
		{"INFO with two objects", "INFO {} {}\r\n", errBadInfo},
		{"-ERR with nothing", "-ERR\r\n", errBadErrText},
		{"-ERR with a control character", "-ERR 'a\x00b'\r\n", errBadErrText},
		// Lengths: a guard that waited for a newline without a bound.
		{"an endless line", "-ERR '" + long, errLineTooLong},
		{"a line a byte over", long + "\r\n", errLineTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{1, 4096, len(tc.in)} {
				if _, err := transcribe(tc.in, chunk, maxAPIReply); !errors.Is(err, tc.want) {
					t.Fatalf("chunks of %d: %v, want %v", chunk, err, tc.want)
				}
			}
		})
	}
}

// TestGuardTakesMessagesUpToTheCap: a message exactly at the cap passes
// (catches a cap off by one the other way), and the system connections'
// larger cap takes what the pool's refuses.
func TestGuardTakesMessagesUpToTheCap(t *testing.T) {
	payload := strings.Repeat("x", maxAPIReply)
	in := "MSG a 1 " + strconv.Itoa(maxAPIReply) + "\r\n" + payload + "\r\n"
	if out, err := transcribe(in, readChunk, maxAPIReply); err != nil || out != in {
		t.Fatalf("a message at the cap: %v", err)
	}
	big := "MSG a 1 " + strconv.Itoa(maxAPIReply+1) + "\r\n" + payload + "x\r\n"
	if _, err := transcribe(big, readChunk, maxAPIReply); !errors.Is(err, errMsgTooLarge) {
		t.Fatalf("over the pool's cap: %v", err)
	}
	if _, err := transcribe(big, readChunk, MaxSystemReply); err != nil {
		t.Fatalf("under the system connections' cap: %v", err)
	}
}

// TestGuardBuffersOneOperation: the guard holds at most one operation and
// a read, and lets a large buffer go once it is empty. Catches a stream
// that appended everything received and never dropped what it decoded.
func TestGuardBuffersOneOperation(t *testing.T) {
	s := protoStream{maxMsg: maxAPIReply, infoSeen: true}
	msg := []byte("MSG a 1 " + strconv.Itoa(maxAPIReply) + "\r\n" + strings.Repeat("x", maxAPIReply) + "\r\n")
	for i := 0; i < 20; i++ {
		r := bytes.NewReader(msg)
		for r.Len() > 0 {
			if err := s.readFrom(r); err != nil {
				t.Fatal(err)
			}
			if err := s.decode(); err != nil {
				t.Fatal(err)
			}
			if cap(s.in) > 3*maxAPIReply {
				t.Fatalf("the stream holds %d bytes", cap(s.in))
			}
			for s.pending() {
				s.read(make([]byte, readChunk))
			}
		}
	}
	if cap(s.in) > keepBuffer || cap(s.out) > keepBuffer {
		t.Errorf("an idle stream keeps %d+%d bytes", cap(s.in), cap(s.out))
	}
}

// TestGuardWantsInfoFirst: nothing passes before the server's INFO.
// Catches a stream that took a MSG as the first operation (nats.go reads
// its first line as INFO with another parser, ReadString).
func TestGuardWantsInfoFirst(t *testing.T) {
	s := protoStream{maxMsg: maxAPIReply}
	s.feed([]byte("MSG a 1 1\r\nx\r\n"))
	if err := s.decode(); !errors.Is(err, errNoInfo) {
		t.Fatalf("decode = %v, want %v", err, errNoInfo)
	}
}
