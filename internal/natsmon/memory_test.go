package natsmon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/internal/testmem"
)

// Each adversarial body is decoded in a child process (testmem) under
// GOMEMLIMIT=64MiB and an address-space limit of asHeadroom over what the
// child had mapped once it built the body; the child must refuse the body
// with the expected error, and decoding may raise its peak RSS (VmHWM) by
// at most the case's bound.
//
// Figures measured on the development machine (linux/amd64, 2 cores):
//
//	case                         operator's decoder   careless variant
//	jsz_of_empty_streams (1 MiB) +0.8 MiB, refused    died: out of memory (+260 MiB, 273 MiB peak, without the limit)
//	jsz_of_nested_arrays (1 MiB) +0.0 MiB, refused    died: out of memory (+753 MiB of stack, 767 MiB peak, without the limit)
//	reload_answer_of_tiny_keys   +0.0 MiB, refused    +37.8 MiB, accepted (GOMEMLIMIT keeps collecting)
//	jsz_at_every_limit (12 MiB)  +7.1 MiB, accepted   +22.7 MiB, accepted
//
// The careless column is KUBENATS_TESTMEM_CARELESS=1 go test -run
// TestDecodingAdversarialBodies ./internal/natsmon/: each of its cases
// fails this test, as it must. Peak RSS of the children: 14 to 44 MiB,
// most of it the test binary and the body itself.
const (
	asHeadroom = 256 << 20
	// refusedBound: a refused body costs the reader next to nothing; 8
	// MiB is the room for the runtime's own noise.
	refusedBound = 8 << 20
	// fullViewBound: the largest view kept is about 5 MB of structure at
	// the limits, twice that while its slices grow (jsz_decode.go), plus
	// its names (short here).
	fullViewBound = 16 << 20
)

func TestDecodingAdversarialBodies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input func() []byte
		// decode is the operator's code; careless the code before the fix.
		decode, careless func([]byte) error
		// want is in decode's error; "" means decode must accept.
		want string
		// bound is how much decoding may raise the child's peak RSS.
		bound int64
	}{
		{
			// 1 MiB of {} in stream_detail: ~350,000 streams. Careless:
			// the old FetchJSZ, encoding/json into server.JSInfo (each {}
			// a 320-byte StreamDetail, ~270 MB).
			name:     "jsz_of_empty_streams",
			input:    func() []byte { return emptyStreams(1 << 20) },
			decode:   decodeJSZ,
			careless: func(in []byte) error { return json.NewDecoder(bytes.NewReader(in)).Decode(&server.JSInfo{}) },
			want:     "lists more than 4096 streams",
			bound:    refusedBound,
		},
		{
			// 1 MiB of [ in a field the operator skips. Careless: the
			// same reader without its depth limit, which recurses once per
			// bracket (a goroutine stack of hundreds of MiB).
			name:   "jsz_of_nested_arrays",
			input:  func() []byte { return nestedArrays(1 << 20) },
			decode: decodeJSZ,
			careless: func(in []byte) error {
				d := newJSONReader(bytes.NewReader(in), "/jsz")
				d.MaxDepth = math.MaxInt
				_, err := d.jsInfo(&jszBudget{})
				return err
			},
			want:  "nests deeper than 32 levels",
			bound: refusedBound,
		},
		{
			// An 8 MiB reload answer (the largest message the protocol
			// guard lets through) whose metadata is ~800,000 tiny keys.
			// Careless: the old sendReloads, json.Unmarshal into a struct
			// with a map[string]string.
			name:   "reload_answer_of_tiny_keys",
			input:  func() []byte { return tinyKeys(8 << 20) },
			decode: func(in []byte) error { _, err := DecodeReloadAnswer(in); return err },
			careless: func(in []byte) error {
				var reply struct {
					Server struct {
						Metadata map[string]string `json:"metadata"`
					} `json:"server"`
				}
				return json.Unmarshal(in, &reply)
			},
			want:  "lists more than 256 metadata entries",
			bound: refusedBound,
		},
		{
			// Not adversarial: the largest view the operator accepts
			// (12 MiB), for the figure of what a real decode needs.
			// Careless: encoding/json into server.JSInfo.
			name:     "jsz_at_every_limit",
			input:    fullView,
			decode:   decodeJSZ,
			careless: func(in []byte) error { return json.Unmarshal(in, &server.JSInfo{}) },
			bound:    fullViewBound,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decode := tc.decode
			if testmem.Careless() {
				decode = tc.careless
			}
			r := testmem.Run(t, asHeadroom, tc.input, decode)
			own := r.PeakRSS - r.InputRSS
			t.Logf("peak RSS %s (%s with the input built, %s more decoding it); error %q",
				testmem.MiB(r.PeakRSS), testmem.MiB(r.InputRSS), testmem.MiB(own), r.Err)
			switch {
			case tc.want == "" && r.Err != "":
				t.Errorf("the decode refused a body within the limits: %s", r.Err)
			case tc.want != "" && !strings.Contains(r.Err, tc.want):
				t.Errorf("the decode ended with %q, want the refusal %q", r.Err, tc.want)
			}
			if own > tc.bound {
				t.Errorf("decoding raised the child's peak RSS by %s, over the bound of %s", testmem.MiB(own), testmem.MiB(tc.bound))
			}
		})
	}
}

func decodeJSZ(in []byte) error {
	_, err := DecodeJSZ(bytes.NewReader(in), "/jsz")
	return err
}

// emptyStreams is a /jsz of about n bytes whose one account lists {}
// streams.
func emptyStreams(n int) []byte {
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(`{"account_details":[{"name":"A","stream_detail":[{}`)
	for b.Len() < n-4 {
		b.WriteString(`,{}`)
	}
	b.WriteString(`]}]}`)
	return b.Bytes()
}

// nestedArrays is a /jsz of n bytes: one field holding brackets that
// never close.
func nestedArrays(n int) []byte {
	return []byte(`{"x":` + strings.Repeat("[", n-5))
}

// tinyKeys is a reload answer of about n bytes whose metadata has one
// short key per ten bytes.
func tinyKeys(n int) []byte {
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(`{"server":{"metadata":{"k0":""`)
	var key []byte
	for i := int64(1); b.Len() < n-3; i++ {
		key = strconv.AppendInt(append(key[:0], `,"`...), i, 36)
		b.Write(append(key, `":""`...))
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// fullView is a /jsz at every limit: 4096 streams, each R3 with four R3
// consumers.
func fullView() []byte {
	var b bytes.Buffer
	b.Grow(13 << 20)
	b.WriteString(`{"meta_cluster":{"leader":"nats-0","replicas":[{"name":"nats-1","current":true},{"name":"nats-2","current":true}]},"account_details":[{"name":"APP","stream_detail":[`)
	for i := range maxJSZStreams {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"STREAM_%d","config":{"num_replicas":3},"cluster":{"leader":"nats-0","replicas":[{"name":"nats-1","current":true,"active":1000},{"name":"nats-2","current":true,"active":1000}]},"consumer_detail":[`, i)
		for j := range 4 {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"C%d","config":{"num_replicas":3},"cluster":{"leader":"nats-1","replicas":[{"name":"nats-0","current":true},{"name":"nats-2","current":true}]}}`, j)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}]}`)
	return b.Bytes()
}

// TestConcurrentLargeBodiesInABoundedChild: sixteen reconcile workers
// each read a 15 MiB /jsz at once (a padding string the reader skips, then
// a meta group), in a child under GOMEMLIMIT=64MiB and 256 MiB of address
// space over what it had mapped with the body built.
//
// The operator's reads stream each body and hold a reservation of the
// process-wide budget while they do (four /jsz at a time): measured +1.8
// MiB, 45 MiB peak (the body is held twice by the test itself). The
// careless variant is the old getJSON, which buffers each whole body in
// encoding/json's decoder (KUBENATS_TESTMEM_CARELESS=1 go test -run
// TestConcurrentLargeBodiesInABoundedChild ./internal/natsmon/): it fails
// this test (measured: out of memory with 217 MB in use).
func TestConcurrentLargeBodiesInABoundedChild(t *testing.T) {
	input := func() []byte {
		var b bytes.Buffer
		b.Grow(15 << 20)
		b.WriteString(`{"padding":"`)
		b.Write(bytes.Repeat([]byte("x"), 15<<20-100))
		b.WriteString(`","meta_cluster":{"leader":"n-0"}}`)
		return b.Bytes()
	}
	fetch := func(ctx context.Context, c *http.Client, url string) error {
		v, err := FetchJSZ(ctx, c, url)
		if err == nil && (v.Meta == nil || v.Meta.Leader != "n-0") {
			err = fmt.Errorf("read %v", v)
		}
		return err
	}
	if testmem.Careless() {
		fetch = func(ctx context.Context, c *http.Client, url string) error {
			resp, err := c.Get(url)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			return json.NewDecoder(&io.LimitedReader{R: resp.Body, N: maxJSZBody + 1}).Decode(&server.JSInfo{})
		}
	}
	decode := func(body []byte) error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
		defer srv.Close()
		errs := make(chan error, 16)
		for range 16 {
			go func() { errs <- fetch(context.Background(), srv.Client(), srv.URL+JSZQuery) }()
		}
		for range 16 {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	}
	r := testmem.Run(t, asHeadroom, input, decode)
	own := r.PeakRSS - r.InputRSS
	t.Logf("peak RSS %s (%s with the body built, %s more reading it sixteen times at once); error %q",
		testmem.MiB(r.PeakRSS), testmem.MiB(r.InputRSS), testmem.MiB(own), r.Err)
	if r.Err != "" {
		t.Errorf("the reads failed: %s", r.Err)
	}
	if own > fullViewBound {
		t.Errorf("the reads raised the child's peak RSS by %s, over the bound of %s", testmem.MiB(own), testmem.MiB(fullViewBound))
	}
}
