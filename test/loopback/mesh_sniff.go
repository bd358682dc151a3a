package loopback

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"time"
)

// What an inbound sidecar listener learns from a connection's first bytes,
// as Envoy's TLS inspector does: TLS or not, and for TLS the ALPN the
// client offers. Istio's client sidecars offer "istio-peer-exchange" and
// "istio"; that is what the mTLS filter chain matches. Nothing is decided
// before the client sends: Istio's protocol detection has no timeout by
// default, so a client that waits for the server to speak first (NATS)
// waits forever.

// firstBytes is what the client sent before the decision.
type firstBytes struct {
	prefix []byte // replayed to whoever takes the connection
	tls    bool
	istio  bool // a ClientHello offering Istio's ALPN
}

// istioALPN is what client sidecars offer for TCP traffic.
var istioALPN = []string{"istio-peer-exchange", "istio"}

// inspect reads the connection's first bytes: one byte tells TLS (a
// handshake record, 0x16) from plaintext; for TLS, the first record, which
// holds the ClientHello, tells its ALPN.
func inspect(conn net.Conn) (firstBytes, error) {
	head := make([]byte, 5)
	if _, err := io.ReadFull(conn, head[:1]); err != nil {
		return firstBytes{}, err
	}
	if head[0] != 0x16 {
		return firstBytes{prefix: head[:1]}, nil
	}
	if _, err := io.ReadFull(conn, head[1:]); err != nil {
		return firstBytes{}, err
	}
	record := make([]byte, int(head[3])<<8|int(head[4]))
	if _, err := io.ReadFull(conn, record); err != nil {
		return firstBytes{}, err
	}
	prefix := append(head, record...)
	return firstBytes{prefix: prefix, tls: true, istio: offersIstioALPN(prefix)}, nil
}

var errHelloRead = errors.New("client hello read")

// offersIstioALPN parses a ClientHello record with crypto/tls itself: a
// server handshake over the recorded bytes that stops at the hello.
func offersIstioALPN(record []byte) bool {
	found := false
	cfg := &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		found = slices.ContainsFunc(hello.SupportedProtos, func(p string) bool { return slices.Contains(istioALPN, p) })
		return nil, errHelloRead
	}}
	_ = tls.Server(&replayConn{r: bytes.NewReader(record)}, cfg).Handshake()
	return found
}

// replayConn reads recorded bytes and discards writes: the inspection
// never answers the client.
type replayConn struct{ r io.Reader }

func (c *replayConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *replayConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *replayConn) Close() error                     { return nil }
func (c *replayConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *replayConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }

// prefixedConn is a connection whose first reads return bytes already
// taken from it.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
