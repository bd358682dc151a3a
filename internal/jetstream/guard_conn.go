package jetstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// dialTimeout bounds one dial: resolving, connecting, the server's INFO and
// the TLS handshake. nats.go applies no timeout of its own to a custom
// dialer.
const dialTimeout = 5 * time.Second

var (
	errNoInfo     = errors.New("the server did not start with INFO")
	errNoTLS      = errors.New("TLS is wanted and the server does not offer it")
	errEarlyBytes = errors.New("the server sent data before the TLS handshake")
)

// guardDialer dials NATS servers for nats.go and stands between the two:
// every byte nats.go reads from the server has passed a protoScanner.
//
// It also speaks TLS itself. nats.go would wrap the connection it got from
// the dialer in TLS after reading INFO, so a guard below it would only see
// ciphertext; instead the guard reads INFO, makes the handshake the server
// asks for (verified with the resource's CA and presenting its
// certificate), and hands nats.go the plaintext, telling it to skip its own
// handshake (SkipTLSHandshake).
type guardDialer struct {
	// transport dials TCP; tests replace it to resolve cluster names.
	transport nats.CustomDialer
	// tls is the configuration the resource asks for, nil for none.
	tls     *tls.Config
	wantTLS bool
	// tlsFirst: the servers expect the TLS handshake before their INFO
	// (handshake_first).
	tlsFirst bool
	// targets is checked for systems kubenats does not run, nil otherwise.
	targets *TargetPolicy
	// onBreak, when set, is called (once per connection, from nats.go's
	// read loop: it must not block) when a server broke a limit. A server
	// that did so once will again: the pool closes the whole nats.Conn
	// rather than let nats.go reconnect to it and hold requests meanwhile.
	onBreak func()
}

// SkipTLSHandshake tells nats.go that the connection it gets is already
// as secure as the server asked for.
func (d *guardDialer) SkipTLSHandshake() bool { return true }

// Dial implements nats.CustomDialer.
func (d *guardDialer) Dial(network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(dialTimeout)
	raw, err := d.connect(network, address, deadline)
	if err != nil {
		return nil, err
	}
	conn, err := d.handshake(raw, host, deadline)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}

// connect opens the TCP connection, after checking where it goes for
// systems kubenats does not run. A name is resolved here, and the address
// checked is the address dialled, so a name cannot change between the two.
func (d *guardDialer) connect(network, address string, deadline time.Time) (net.Conn, error) {
	transport := d.transport
	if transport == nil {
		transport = &net.Dialer{Deadline: deadline}
	}
	if d.targets == nil {
		return transport.Dial(network, address)
	}
	host, port, _ := net.SplitHostPort(address)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	addrs, err := resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := d.targets.Allows(a); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", host, a, err)
		}
	}
	var last error
	for _, a := range addrs {
		conn, err := transport.Dial(network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}

func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}

// handshake reads the server's INFO, makes the TLS handshake when one is
// due, and returns the guarded connection, INFO first.
func (d *guardDialer) handshake(raw net.Conn, host string, deadline time.Time) (net.Conn, error) {
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if d.tlsFirst {
		tc, err := d.tlsClient(raw, host)
		if err != nil {
			return nil, err
		}
		return d.guarded(tc)
	}
	info, rest, err := readInfo(raw)
	if err != nil {
		return nil, err
	}
	var offer struct {
		TLSRequired  bool `json:"tls_required"`
		TLSAvailable bool `json:"tls_available"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(info[len("INFO "):]), &offer); err != nil {
		return nil, errNoInfo
	}
	conn := raw
	if offer.TLSRequired || d.wantTLS {
		if !offer.TLSRequired && !offer.TLSAvailable {
			return nil, errNoTLS
		}
		if len(rest) > 0 {
			return nil, errEarlyBytes
		}
		tc, err := d.tlsClient(raw, host)
		if err != nil {
			return nil, err
		}
		conn = tc
	}
	if err := conn.SetDeadline(time.Time{}); err != nil { // nats.go sets its own
		return nil, err
	}
	g := &guardedConn{Conn: conn, pending: append(info, rest...), onBreak: d.onBreak}
	if err := g.scan.feed(g.pending); err != nil {
		return nil, err
	}
	return g, nil
}

// tlsClient makes the TLS handshake on raw, verifying the server as host
// unless the configuration names it.
func (d *guardDialer) tlsClient(raw net.Conn, host string) (*tls.Conn, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if d.tls != nil {
		cfg = d.tls.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(raw, cfg)
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	return tc, nil
}

// guarded is a TLS-first connection behind the guard: its INFO, read by
// nats.go, passes the scanner like everything after it.
func (d *guardDialer) guarded(tc *tls.Conn) (net.Conn, error) {
	if err := tc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return &guardedConn{Conn: tc, onBreak: d.onBreak}, nil
}

// readInfo reads the first line, which must be INFO, and returns it with
// its newline and whatever else the read brought.
func readInfo(c net.Conn) (line, rest []byte, _ error) {
	buf := make([]byte, 0, 4096)
	for {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, rest = buf[:i+1], bytes.Clone(buf[i+1:])
			if len(line) < len("INFO ") || !strings.EqualFold(string(line[:4]), "INFO") {
				return nil, nil, errNoInfo
			}
			return line, rest, nil
		}
		if len(buf) > maxProtoLine {
			return nil, nil, errLineTooLong
		}
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && n == 0 {
			return nil, nil, err
		}
	}
}

// guardedConn hands nats.go what the server sent once protoScanner has
// passed it, and closes the connection on the first byte that breaks a
// limit. Writes go straight through.
type guardedConn struct {
	net.Conn
	pending []byte // read during the dial, already scanned
	scan    protoScanner
	broken  error
	onBreak func()
}

func (g *guardedConn) Read(p []byte) (int, error) {
	if g.broken != nil {
		return 0, g.broken
	}
	if len(g.pending) > 0 {
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	}
	n, err := g.Conn.Read(p)
	if n > 0 {
		if serr := g.scan.feed(p[:n]); serr != nil {
			g.broken = serr
			log.Info("closing a NATS connection that broke the protocol limits", "server", g.RemoteAddr().String(), "error", serr.Error())
			g.Conn.Close()
			if g.onBreak != nil {
				g.onBreak()
			}
			return 0, serr
		}
	}
	return n, err
}

// GuardOptions are the nats.go options that put a connection kubenats
// makes outside the pool behind the same guard: its servers run an image a
// tenant chose, and answer what they like. cfg, when set, is the TLS the
// connection wants (verified under the host name nats.go dials); transport,
// when set, opens the TCP connections (to map server names to addresses).
func GuardOptions(cfg *tls.Config, tlsFirst bool, transport nats.CustomDialer) []nats.Option {
	g := &guardDialer{tls: cfg, wantTLS: cfg != nil, tlsFirst: tlsFirst && cfg != nil, transport: transport}
	// IgnoreDiscoveredServers: the servers run spec.image, which may tell
	// of any address in connect_urls; the operator dials only its pods.
	return []nats.Option{nats.SetCustomDialer(g), nats.SkipHostLookup(), nats.IgnoreDiscoveredServers()}
}
