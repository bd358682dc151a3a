package jetstream

import (
	"bytes"
	"fmt"
)

// Limits on a message's header block, for the protocol guard to apply to
// every HMSG before nats.go sees it. nats.go turns a header block into a
// map as it builds the Msg (DecodeHeadersMsg, in its read loop), one key
// per line: 8 MiB of short lines ("a:b\r\n") is 1.2 M keys and some 146 MB,
// more than the operator's 128 MiB, and the message size cap alone allows
// it. What the operator receives with headers is small: status replies
// ("NATS/1.0 503", "NATS/1.0 408 Request Timeout") with one or two lines,
// and direct gets with nats-server's own Nats-* lines (stream, sequence,
// subject, time, pending: under ten) plus the stored message's headers,
// which for the objects the operator reads (object store metadata, KV
// entries) are one or two. 64 KiB and 128 lines leave room for any real
// reply; at the limit the map is 128 keys, a few KiB.
const (
	// MaxHeaderBytes bounds a header block, its first line included: the
	// <hdr_len> of an HMSG line.
	MaxHeaderBytes = 64 << 10
	// MaxHeaderLines bounds the lines of a header block after its first
	// ("NATS/1.0 ..."), the blank line that ends it excluded.
	MaxHeaderLines = 128
)

// CheckHeaderSize refuses an HMSG whose stated header length is past
// MaxHeaderBytes. The guard calls it on the HMSG line, before any of the
// header is read.
func CheckHeaderSize(hdrLen int) error {
	if hdrLen < 0 || hdrLen > MaxHeaderBytes {
		return fmt.Errorf("the server announced a message header of %d bytes; the operator reads at most %d", hdrLen, MaxHeaderBytes)
	}
	return nil
}

// CheckHeaderBlock refuses a header block (the first <hdr_len> bytes of an
// HMSG payload) that is past MaxHeaderBytes or has more than
// MaxHeaderLines lines, counted as nats.go counts them: each '\n' ends a
// line; the first line is the version and status, and the empty line
// that ends the block is no header.
func CheckHeaderBlock(block []byte) error {
	if err := CheckHeaderSize(len(block)); err != nil {
		return err
	}
	if lines := headerLines(block); lines > MaxHeaderLines {
		return fmt.Errorf("the server sent a message header of %d lines; the operator reads at most %d", lines, MaxHeaderLines)
	}
	return nil
}

// headerLines counts the header lines of block: its '\n's, less the
// status line and the blank line that ends a well-formed block.
func headerLines(block []byte) int {
	n := bytes.Count(block, []byte{'\n'})
	if bytes.HasSuffix(block, []byte("\r\n\r\n")) {
		n-- // the blank line
	}
	return max(n-1, 0) // the status line
}

// HeaderCounter applies CheckHeaderBlock's limits to a header block that
// arrives in pieces, keeping only two counts: for a guard that passes a
// payload through as it reads it. The zero value is ready; Reset it for
// each message.
type HeaderCounter struct {
	bytes, newlines int
}

// Reset starts a new header block.
func (c *HeaderCounter) Reset() { *c = HeaderCounter{} }

// Feed counts the next piece of the block, and refuses it once the block
// is past either limit (the status line and the blank line that ends the
// block are allowed for: MaxHeaderLines+2 newlines).
func (c *HeaderCounter) Feed(p []byte) error {
	c.bytes += len(p)
	if err := CheckHeaderSize(c.bytes); err != nil {
		return err
	}
	c.newlines += bytes.Count(p, []byte{'\n'})
	if c.newlines > MaxHeaderLines+2 {
		return fmt.Errorf("the server sent a message header of more than %d lines; the operator reads at most %d", MaxHeaderLines, MaxHeaderLines)
	}
	return nil
}
