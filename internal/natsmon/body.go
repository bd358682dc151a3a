package natsmon

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Caps on the monitor bodies the operator reads. A server's monitor port
// answers to whoever runs its image (spec.image is the tenant's), so a body
// is untrusted: without a cap, one endless answer keeps the operator busy
// forever. The caps sit far above what real servers send: /varz is a few
// KiB; /jsz with streams, consumers, config and Raft groups is about 3 KiB
// per stream with its consumers, so 16 MiB carries some 5000 streams. The
// bytes are never held: bodies are decoded as they arrive (internal/jsonread),
// and what bounds memory is what a decode keeps (jsz_decode.go's limits)
// and how many decodes run at once (inflight.go).
const (
	maxVarzBody = 1 << 20
	maxJSZBody  = 16 << 20
)

// getJSON GETs url with c and hands the answer to decode, which may read
// at most limit bytes of it. It follows no redirect, pins the request to
// url's address (client.go), and holds limit bytes of the process-wide
// in-flight budget while it runs (inflight.go).
func getJSON(ctx context.Context, c *http.Client, url string, limit int64, decode func(io.Reader) error) error {
	resp, done, err := get(ctx, c, url, limit)
	if err != nil {
		return err
	}
	defer done()
	return decodeBody(resp, limit, decode)
}

// get GETs url with c as getJSON does, whatever the answer's status, and
// holds limit bytes of the in-flight budget until done, which also closes
// the body.
func get(ctx context.Context, c *http.Client, url string, limit int64) (_ *http.Response, done func(), _ error) {
	release, err := Reserve(ctx, limit)
	if err != nil {
		return nil, nil, err
	}
	req, err := NewRequest(ctx, url)
	if err != nil {
		release()
		return nil, nil, err
	}
	resp, err := noRedirects(c).Do(req)
	if err != nil {
		release()
		return nil, nil, err
	}
	return resp, func() { resp.Body.Close(); release() }, nil
}

// decodeBody hands resp's body to decode, refusing it past limit bytes.
func decodeBody(resp *http.Response, limit int64, decode func(io.Reader) error) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Request.URL.Path, resp.Status)
	}
	body := &io.LimitedReader{R: resp.Body, N: limit + 1}
	err := decode(body)
	if body.N <= 0 {
		return fmt.Errorf("%s: the answer is larger than %d bytes", resp.Request.URL.Path, limit)
	}
	return err
}
