package backup

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestRestoreSendsFullChunks: an archive read a few bytes at a time (an
// object store's body) is sent in reads as full as the buffer, the last
// one short with no error, then io.EOF alone. Careless variants watched
// failing: the reader passed through (a request per 3 bytes), and the
// last bytes returned with io.EOF (jsm.go drops them).
func TestRestoreSendsFullChunks(t *testing.T) {
	body := iotest.HalfReader(iotest.DataErrReader(strings.NewReader(strings.Repeat("x", 23))))
	r := fullChunks{body}
	buf := make([]byte, 10)
	var got []int
	for {
		n, err := r.Read(buf)
		if err == io.EOF {
			if n != 0 {
				t.Fatalf("%d bytes with io.EOF", n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if fmt.Sprint(got) != "[10 10 3]" {
		t.Errorf("reads of %v, want [10 10 3]", got)
	}
}
