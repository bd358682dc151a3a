package natsmon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Caps on the monitor bodies the operator reads. A server's monitor port
// answers to whoever runs its image (spec.image is the tenant's), so a body
// is untrusted: without a cap, one endless answer grows the operator until
// it is killed, and every tenant's reconciles stop with it. The caps sit far
// above what real servers send: /varz is a few KiB; /jsz with streams,
// consumers, config and Raft groups is about 3 KiB per stream with its
// consumers, so 16 MiB carries some 5000 streams. The operator runs with
// 128 MiB.
const (
	maxVarzBody = 1 << 20
	maxJSZBody  = 16 << 20
)

// getJSON GETs url with c and decodes the answer into v, reading at most
// limit bytes of it. It follows no redirect, and pins the request to
// url's address (client.go).
func getJSON(ctx context.Context, c *http.Client, url string, limit int64, v any) error {
	req, err := NewRequest(ctx, url)
	if err != nil {
		return err
	}
	resp, err := noRedirects(c).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeJSON(resp, limit, v)
}

// decodeJSON decodes resp's body into v, reading at most limit bytes.
func decodeJSON(resp *http.Response, limit int64, v any) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Request.URL.Path, resp.Status)
	}
	body := &io.LimitedReader{R: resp.Body, N: limit + 1}
	err := json.NewDecoder(body).Decode(v)
	if body.N <= 0 {
		return fmt.Errorf("%s: the answer is larger than %d bytes", resp.Request.URL.Path, limit)
	}
	return err
}
