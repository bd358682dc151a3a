package exporter

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Fetcher reads one monitor endpoint into v, at most limit bytes of it.
// With anyStatus the body is decoded whatever the HTTP status (/healthz
// answers 503 with a JSON body that says why).
type Fetcher interface {
	Fetch(ctx context.Context, path string, limit int64, anyStatus bool, v any) error
}

// HTTPFetcher reads the monitor port at Base (http://127.0.0.1:8222, or
// https with TLS). It dials Base's address and nothing else and follows
// no redirect: the server runs the tenant's image, and a redirect would
// otherwise point the exporter at any address the pod can reach.
type HTTPFetcher struct {
	Base   *url.URL
	Client *http.Client
}

// errRedirect is the error of an answer that tried to send us elsewhere.
var errRedirect = errors.New("the monitor port answered with a redirect, which the exporter does not follow")

// NewHTTPFetcher reads the monitor port at base, with tlsConfig for https
// (nil: the system roots, which a cluster CA is not among).
func NewHTTPFetcher(base string, tlsConfig *tls.Config) (*HTTPFetcher, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("monitor URL %q: want http:// or https:// and a host", base)
	}
	addr := u.Host
	if u.Port() == "" {
		return nil, fmt.Errorf("monitor URL %q: name the port", base)
	}
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			if a != addr {
				return nil, fmt.Errorf("refusing to dial %s: the monitor port is %s", a, addr)
			}
			return dialer.DialContext(ctx, network, a)
		},
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 2 * time.Second,
		MaxIdleConns:        2,
		IdleConnTimeout:     90 * time.Second,
	}
	return &HTTPFetcher{Base: u, Client: &http.Client{
		Transport:     transport,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect },
	}}, nil
}

// Fetch implements Fetcher.
func (f *HTTPFetcher) Fetch(ctx context.Context, path string, limit int64, anyStatus bool, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.Base.String()+path, nil)
	if err != nil {
		return err
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && !anyStatus {
		return fmt.Errorf("%s: %s", req.URL.Path, resp.Status)
	}
	if err := Decode(resp.Body, limit, v); err != nil {
		return fmt.Errorf("%s: %w", req.URL.Path, err)
	}
	return nil
}
