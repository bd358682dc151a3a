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
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/serverbudget"
)

// dialTimeout bounds one dial: resolving, connecting, the server's INFO and
// the TLS handshake. nats.go applies no timeout of its own to a custom
// dialer.
const dialTimeout = 5 * time.Second

var (
	errNoInfo      = errors.New("the server did not start with INFO")
	errNoTLS       = errors.New("TLS is wanted and the server does not offer it")
	errEarlyBytes  = errors.New("the server sent data before the TLS handshake")
	errNoServerPod = errors.New("no server pod of the cluster has an address yet")
)

// guardDialer dials NATS servers for nats.go and stands between the two:
// nats.go reads nothing the server sent, only what protoStream wrote of
// the operations it decoded and checked (guard_parse.go).
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
	// plaintextHosts may answer without offering TLS although wantTLS:
	// servers an earlier release started without client TLS (PodAddr's
	// ServesNoTLS for pinned dials). Offered TLS is still always taken.
	plaintextHosts map[string]bool
	// tlsFirst: the servers expect the TLS handshake before their INFO
	// (handshake_first).
	tlsFirst bool
	// targets is checked for systems kubenats does not run, nil otherwise.
	targets *TargetPolicy
	// namespace is the one whose servers these are (ConnSpec.namespace):
	// targets keeps an external connection out of other namespaces' pods
	// and Services, and what the servers send is reserved in its share
	// of memory.
	namespace string
	// pinned, for a cluster kubenats runs, lists its own server pods: all
	// that is dialled, the URL's host aside (ConnSpec.Pinned).
	pinned func() ([]PodAddr, error)
	// maxMsg is the largest message taken (maxAPIReply when 0).
	maxMsg int
	// deliveries, for a pool connection, admits only what nats.go asked
	// for (guard_deliveries.go).
	deliveries *deliveries
	// onBreak, when set, is called (once per connection, from nats.go's
	// read loop: it must not block) when a server broke a limit. A server
	// that did so once will again: the pool closes the whole nats.Conn
	// rather than let nats.go reconnect to it and hold requests meanwhile.
	onBreak func()
	// memory is the budget what the servers send is reserved from
	// (serverbudget.Memory when nil), in namespace's share.
	memory *serverbudget.Budget
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
	raw, noTLS, err := d.connect(network, address, deadline)
	if err != nil {
		return nil, err
	}
	wire := newWireLease(d.memory, d.namespace)
	conn, err := d.handshake(raw, host, noTLS || d.plaintextHosts[host], deadline, wire)
	if err != nil {
		wire.close()
		raw.Close()
		return nil, err
	}
	return conn, nil
}

// PodAddr is a server pod's address, and whether its server serves no
// client TLS at all (an earlier release started it so).
type PodAddr struct {
	Addr        netip.Addr
	ServesNoTLS bool
}

// connect opens the TCP connection, after checking where it goes for
// systems kubenats does not run. A name is resolved here, and the address
// checked is the address dialled, so a name cannot change between the two.
// noTLS says the pod dialled serves no TLS (pinned dials only).
func (d *guardDialer) connect(network, address string, deadline time.Time) (_ net.Conn, noTLS bool, _ error) {
	transport := d.transport
	if transport == nil {
		transport = &net.Dialer{Deadline: deadline}
	}
	host, port, _ := net.SplitHostPort(address)
	var pods []PodAddr
	switch {
	case d.pinned != nil:
		// The name is not resolved at all: where it leads is not ours
		// to trust.
		var err error
		if pods, err = d.pinned(); err != nil {
			return nil, false, err
		}
		if len(pods) == 0 {
			return nil, false, fmt.Errorf("%s: %w", host, errNoServerPod)
		}
	case d.targets == nil:
		conn, err := transport.Dial(network, address)
		return conn, false, err
	default:
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		addrs, err := resolve(ctx, host)
		if err != nil {
			return nil, false, err
		}
		for _, a := range addrs {
			if err := d.targets.AllowsFrom(ctx, d.namespace, a); err != nil {
				return nil, false, fmt.Errorf("%s (%s): %w", host, a, err)
			}
			pods = append(pods, PodAddr{Addr: a})
		}
	}
	var last error
	for _, p := range pods {
		conn, err := transport.Dial(network, net.JoinHostPort(p.Addr.String(), port))
		if err == nil {
			return conn, p.ServesNoTLS, nil
		}
		last = err
	}
	return nil, false, last
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
//
// noTLS lets a server that offers no TLS at all be reached in plaintext
// although the connection wants TLS: one an earlier release started
// without client TLS. TLS offered is taken all the same.
func (d *guardDialer) handshake(raw net.Conn, host string, noTLS bool, deadline time.Time, wire *wireLease) (net.Conn, error) {
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if d.tlsFirst {
		tc, err := d.tlsClient(raw, host)
		if err != nil {
			return nil, err
		}
		return d.guarded(tc, d.newStream(wire))
	}
	stream := d.newStream(wire)
	info, err := readInfo(raw, &stream)
	if err != nil {
		return nil, err
	}
	var offer struct {
		TLSRequired  bool `json:"tls_required"`
		TLSAvailable bool `json:"tls_available"`
	}
	if err := json.Unmarshal(info, &offer); err != nil {
		return nil, errNoInfo
	}
	conn := raw
	offered := offer.TLSRequired || offer.TLSAvailable
	if !offered && d.wantTLS && !noTLS {
		return nil, errNoTLS
	}
	if offer.TLSRequired || (d.wantTLS && offered) {
		if len(stream.in) > 0 {
			return nil, errEarlyBytes
		}
		tc, err := d.tlsClient(raw, host)
		if err != nil {
			return nil, err
		}
		conn = tc
	}
	// What came with INFO (in plaintext) is decoded now, so that a
	// limit it breaks fails the dial.
	if err := stream.decode(); err != nil {
		return nil, err
	}
	return d.guarded(conn, stream)
}

// newStream is the decoder of one connection's server bytes, reserving
// through wire.
func (d *guardDialer) newStream(wire *wireLease) protoStream {
	s := protoStream{maxMsg: maxAPIReply, wire: wire}
	if d.maxMsg > 0 {
		s.maxMsg = d.maxMsg
	}
	if d.deliveries != nil {
		s.admit = d.deliveries.admit
	}
	return s
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

// guarded puts conn behind the guard, with what stream already holds
// (for a TLS-first connection, nothing: its INFO, read by nats.go, is
// decoded like everything after it).
func (d *guardDialer) guarded(conn net.Conn, stream protoStream) (net.Conn, error) {
	if err := conn.SetDeadline(time.Time{}); err != nil { // nats.go sets its own
		return nil, err
	}
	return &guardedConn{Conn: conn, stream: stream, onBreak: d.onBreak, deliveries: d.deliveries, wire: stream.wire}, nil
}

// readInfo reads until the first operation is whole, which must be INFO,
// and returns its JSON object. The INFO, re-encoded, waits in stream for
// nats.go; what came after it waits undecoded (it may be the start of the
// TLS handshake's answer, or early bytes the dial refuses).
func readInfo(c net.Conn, stream *protoStream) ([]byte, error) {
	for {
		op, n, err := parseServerOp(stream.in, stream.maxMsg)
		if err != nil {
			return nil, err
		}
		if n == 0 && op.need > 0 {
			return nil, errNoInfo // a message's line: nothing of it is read
		}
		if n > 0 {
			if op.kind != opInfo {
				return nil, errNoInfo
			}
			info := bytes.Clone(op.arg)
			if stream.out, err = appendServerOp(stream.out, &op); err != nil {
				return nil, err
			}
			stream.infoSeen = true
			stream.in = stream.in[:copy(stream.in, stream.in[n:])]
			return info, nil
		}
		if err := stream.readFrom(c); err != nil {
			// Bytes that came with the error may complete the INFO.
			op, n, perr := parseServerOp(stream.in, stream.maxMsg)
			if perr != nil {
				return nil, perr
			}
			if n == 0 || op.kind != opInfo {
				return nil, err
			}
		}
	}
}

// guardedConn hands nats.go what protoStream wrote of what the server
// sent, and closes the connection on the first operation that breaks the
// protocol or a limit. Writes (the operator's own) go straight through,
// read on the way by clientScan on a pool connection.
type guardedConn struct {
	net.Conn
	stream  protoStream
	broken  error
	onBreak func()

	deliveries *deliveries
	written    clientScan
	// wire is what the connection holds of the memory budget (also
	// stream.wire, which breakOff drops with the stream).
	wire *wireLease
}

// Close gives back the connection's reservation with the connection.
func (g *guardedConn) Close() error {
	g.wire.close()
	return g.Conn.Close()
}

func (g *guardedConn) Write(p []byte) (int, error) {
	if g.deliveries != nil {
		// Recorded before the server can answer what p asks.
		if err := g.written.scan(p, g.deliveries.wrote); err != nil {
			log.Error(err, "closing a NATS connection")
			g.Conn.Close()
			return 0, err
		}
	}
	return g.Conn.Write(p)
}

func (g *guardedConn) Read(p []byte) (int, error) {
	for !g.stream.pending() {
		if g.broken != nil {
			return 0, g.broken
		}
		// nats.go took all it was handed: only what is still being
		// received stays reserved.
		g.stream.settle()
		rerr := g.stream.readFrom(g.Conn)
		if errors.Is(rerr, errNoRoom) {
			g.breakOff(rerr)
			return 0, rerr
		}
		if err := g.stream.decode(); err != nil {
			g.breakOff(err)
			return 0, err
		}
		if rerr != nil && !g.stream.pending() {
			return 0, rerr
		}
	}
	return g.stream.read(p), nil
}

// breakOff closes the connection for good on err.
func (g *guardedConn) breakOff(err error) {
	g.broken = err
	g.stream = protoStream{}
	if errors.Is(err, errNoRoom) {
		log.Info("closing a NATS connection whose server sends more than the operator's memory budget has room for", "server", g.RemoteAddr().String())
	} else {
		log.Info("closing a NATS connection that broke the protocol limits", "server", g.RemoteAddr().String(), "error", err.Error())
	}
	g.wire.close()
	g.Conn.Close()
	if g.onBreak != nil {
		g.onBreak()
	}
}
