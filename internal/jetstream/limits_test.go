package jetstream

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// headerBlock is a well-formed header block with n lines after the
// status line.
func headerBlock(n int) []byte {
	return []byte("NATS/1.0\r\n" + strings.Repeat("a:b\r\n", n) + "\r\n")
}

func TestCheckHeaderBlock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block []byte
		want  string // empty: accepted
	}{
		{"no header lines", []byte("NATS/1.0\r\n\r\n"), ""},
		{"a status reply", []byte("NATS/1.0 503\r\n\r\n"), ""},
		{"a direct get", []byte("NATS/1.0\r\nNats-Stream: KV_a\r\nNats-Subject: $KV.a.k\r\nNats-Sequence: 4\r\nNats-Time-Stamp: 2026-12-01T10:00:00Z\r\n\r\n"), ""},
		{"at the line limit", headerBlock(MaxHeaderLines), ""},
		{"one line past it", headerBlock(MaxHeaderLines + 1), "of 129 lines"},
		{"8 MiB of short lines", headerBlock(8 << 20 / 5), "8388617 bytes; the operator reads at most 65536"},
		{"long lines under the line limit", []byte("NATS/1.0\r\nk:" + strings.Repeat("v", MaxHeaderBytes) + "\r\n\r\n"), "bytes; the operator reads at most 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHeaderBlock(tc.block)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckHeaderBlock = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckHeaderBlock = %v, want an error with %q", err, tc.want)
			}
			// Fed in pieces, the counter agrees on every accepted block
			// and refuses every refused one.
			var c HeaderCounter
			var ferr error
			for i := 0; i < len(tc.block) && ferr == nil; i += 7 {
				ferr = c.Feed(tc.block[i:min(i+7, len(tc.block))])
			}
			if (ferr == nil) != (tc.want == "") {
				t.Fatalf("HeaderCounter.Feed = %v, CheckHeaderBlock = %v", ferr, err)
			}
		})
	}
}

// TestAcceptedHeadersAreFewKeys ties the limits to what they protect:
// nats.go's map of an accepted block has at most MaxHeaderLines keys.
func TestAcceptedHeadersAreFewKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("NATS/1.0\r\n")
	for i := range MaxHeaderLines {
		b.WriteString("k" + strings.Repeat("x", i) + ":v\r\n")
	}
	b.WriteString("\r\n")
	block := []byte(b.String())
	if err := CheckHeaderBlock(block); err != nil {
		t.Fatalf("CheckHeaderBlock = %v", err)
	}
	h, err := nats.DecodeHeadersMsg(block)
	if err != nil || len(h) != MaxHeaderLines {
		t.Fatalf("nats.go read %d keys (%v), want %d", len(h), err, MaxHeaderLines)
	}
}

func TestCheckHeaderSize(t *testing.T) {
	if CheckHeaderSize(MaxHeaderBytes) != nil || CheckHeaderSize(MaxHeaderBytes+1) == nil || CheckHeaderSize(-1) == nil {
		t.Fatal("CheckHeaderSize disagrees with MaxHeaderBytes")
	}
}
