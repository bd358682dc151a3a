package natsmon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// A server's monitor port answers to whoever runs its image (spec.image is
// the tenant's), so the operator's HTTP clients trust nothing it says
// about where to go. A redirect would send the operator anywhere the
// operator can reach (loopback, a cloud metadata address, another
// tenant's monitor port that its NetworkPolicy opens to the operator
// alone) and hand back the answer through the status. So:
//
//   - no client follows a redirect (NewClient, and getJSON for any client
//     it is given): a 3xx is a failed request;
//   - every request is pinned to the address its URL names (NewRequest),
//     and the transport dials that address and no other (NewTransport):
//     a redirect followed by mistake, or a proxy from the environment,
//     fails at the dial;
//   - what reaches the status from an answer is checked (a version must
//     look like one, names are bounded: Shown).

// ErrRedirect is the error of a request the monitor port answered with a
// redirect.
var ErrRedirect = errors.New("the monitor port answered with a redirect, which the operator does not follow")

// refuseRedirect is every monitor client's CheckRedirect.
func refuseRedirect(*http.Request, []*http.Request) error { return ErrRedirect }

// DialFunc dials a network address (the operator's own dialer, in tests).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// NewTransport is the transport of every monitor client: it dials only the
// address pinned in the request's context (NewRequest) through dial (nil:
// TCP), and uses no proxy.
func NewTransport(dial DialFunc) *http.Transport {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 3 * time.Second}).DialContext
	}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			pinned, ok := ctx.Value(pinKey{}).(string)
			if !ok || addr != pinned {
				return nil, fmt.Errorf("refusing to dial %s: the request was made for %q", addr, pinned)
			}
			return dial(ctx, network, addr)
		},
		MaxIdleConns:        16,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: 3 * time.Second,
	}
}

// NewClient is a monitor client over transport, giving up after timeout,
// that follows no redirect.
func NewClient(timeout time.Duration, transport http.RoundTripper) *http.Client {
	return &http.Client{Timeout: timeout, Transport: transport, CheckRedirect: refuseRedirect}
}

// pinKey holds, in a request's context, the one address its dial may reach.
type pinKey struct{}

// NewRequest is a GET of url whose dial is pinned to url's own host and
// port: the transport of NewTransport dials nothing else for it.
func NewRequest(ctx context.Context, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	return req.WithContext(context.WithValue(ctx, pinKey{}, net.JoinHostPort(host, port))), nil
}

// noRedirects is a copy of c that follows no redirect, whatever c's own
// CheckRedirect says: a client a caller made by hand cannot bring
// redirects back.
func noRedirects(c *http.Client) *http.Client {
	copied := *c
	copied.CheckRedirect = refuseRedirect
	return &copied
}
