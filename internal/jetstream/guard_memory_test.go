package jetstream

import (
	"bytes"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/testmem"
)

// TestHeaderOfShortLinesInABoundedChild: an 8 MiB header block of
// "a:b\r\n" lines (1.7 M lines, what the 8 MiB message cap allows), as a
// server may send it in an HMSG, checked in a child process (testmem)
// under GOMEMLIMIT=64MiB and an address space of 256 MiB over what the
// child had mapped once it built the block.
//
// The operator's path is the protocol guard's parser, at the largest
// message it takes (a system connection's): it refuses the HMSG before
// nats.go sees it and raises the child's peak RSS by nothing (measured: +0.0 MiB, 36 MiB peak, the test
// binary and the block itself). The careless variant is what nats.go does
// with the block when nothing refuses it, nats.DecodeHeadersMsg, which
// builds its map of keys (KUBENATS_TESTMEM_CARELESS=1 go test -run
// TestHeaderOfShortLinesInABoundedChild ./internal/jetstream/): it fails
// this test (measured: accepted, +64.6 MiB, 103 MiB peak, with the
// collector held to 64 MiB; ~146 MB without).
func TestHeaderOfShortLinesInABoundedChild(t *testing.T) {
	input := func() []byte {
		hmsg := bytes.NewBuffer(make([]byte, 0, 8<<20+64))
		hmsg.WriteString("HMSG s 1 8388608 8388608\r\n")
		start := hmsg.Len()
		hmsg.WriteString("NATS/1.0\r\n")
		for hmsg.Len()-start < 8<<20-7 {
			hmsg.WriteString("a:b\r\n")
		}
		for hmsg.Len()-start < 8<<20 {
			hmsg.WriteString("\r\n")
		}
		hmsg.WriteString("\r\n")
		return hmsg.Bytes()
	}
	decode := func(hmsg []byte) error {
		_, _, err := parseServerOp(hmsg, MaxSystemReply)
		return err
	}
	if testmem.Careless() {
		decode = func(hmsg []byte) error {
			block := hmsg[bytes.IndexByte(hmsg, '\n')+1 : len(hmsg)-2]
			_, err := nats.DecodeHeadersMsg(block)
			return err
		}
	}
	r := testmem.Run(t, 256<<20, input, decode)
	own := r.PeakRSS - r.InputRSS
	t.Logf("peak RSS %s (%s with the block built, %s more checking it); error %q",
		testmem.MiB(r.PeakRSS), testmem.MiB(r.InputRSS), testmem.MiB(own), r.Err)
	if r.Err == "" {
		t.Errorf("the header block of 8 MiB was accepted")
	}
	if own > 8<<20 {
		t.Errorf("checking the block raised the child's peak RSS by %s, over the bound of 8 MiB", testmem.MiB(own))
	}
}
