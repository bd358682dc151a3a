package jetstream

import (
	"errors"
	"strings"
	"testing"
)

func TestProtoScanner(t *testing.T) {
	long := strings.Repeat("a", maxProtoLine+1)
	for _, tc := range []struct {
		name   string
		chunks []string
		want   error
	}{
		{"ordinary traffic", []string{"INFO {}\r\n", "PONG\r\n+OK\r\nPING\r\n", "MSG a 1 5\r\nhello\r\n", "HMSG a 1 _INBOX.r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"}, nil},
		{"a payload split across reads", []string{"MSG a 1 1", "0\r\n01234", "56789\r", "\n", "PING\r\n"}, nil},
		{"a payload holding protocol text", []string{"MSG a 1 24\r\nMSG a 1 999999999999\r\nxx\r\n"}, nil},
		{"a payload of newlines only", []string{"MSG a 1 4\r\n\n\n\n\n\r\nPING\r\n"}, nil},
		{"an empty payload", []string{"MSG a 1 0\r\n\r\n"}, nil},
		{"lower-case op, tabs", []string{"msg\ta\t1\t3\r\nabc\r\n"}, nil},
		{"a message exactly at the cap", []string{"MSG a 1 8388608\r\n"}, nil},
		{"a message over the cap", []string{"MSG a 1 8388609\r\n"}, errMsgTooLarge},
		{"a size nats.go would wrap around", []string{"MSG a 1 18446744073709551617\r\n"}, errBadMsgLine},
		{"HMSG total over the cap", []string{"HMSG a 1 10 9999999999\r\n"}, errMsgTooLarge},
		{"HMSG headers beyond the total", []string{"HMSG a 1 20 10\r\n"}, errBadMsgLine},
		{"MSG without a size", []string{"MSG a 1\r\n"}, errBadMsgLine},
		{"MSG with a negative size", []string{"MSG a 1 -5\r\n"}, errBadMsgLine},
		{"an endless line", []string{"-ERR '", long}, errLineTooLong},
		{"endless bytes after a payload", []string{"MSG a 1 1\r\nx", long}, errLineTooLong},
		{"a long line split at the cap", []string{long[:maxProtoLine], "\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s protoScanner
			var err error
			for _, c := range tc.chunks {
				if err = s.feed([]byte(c)); err != nil {
					break
				}
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("feed = %v, want %v", err, tc.want)
			}
			if cap(s.line) > maxProtoLine+4096 {
				t.Errorf("the scanner kept %d bytes", cap(s.line))
			}
		})
	}
}

// TestProtoScannerLineSpreadOverReads: the cap holds for a line that comes
// a byte at a time.
func TestProtoScannerLineSpreadOverReads(t *testing.T) {
	var s protoScanner
	for i := 0; i <= maxProtoLine; i++ {
		if err := s.feed([]byte("x")); err != nil {
			if i < maxProtoLine {
				t.Fatalf("refused at %d bytes", i)
			}
			return
		}
	}
	t.Fatal("a line of more than maxProtoLine bytes passed")
}
