package loopback

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// sidecar is one pod's proxy: inbound listeners on the pod's address,
// outbound listeners per known destination, and every connection it
// carries (for the drain and for policy changes).
type sidecar struct {
	m            *Mesh
	w            meshWorkload
	cert         tls.Certificate
	id           string
	podIP, appIP string

	mu sync.Mutex
	// view is what istiod last pushed it.
	view    *meshView
	inbound []net.Listener
	// bypass are the pod's ports that iptables does not send to the
	// sidecar: plain forwards to the app that no policy applies to, and
	// that a crash of the proxy leaves alone.
	bypass   []net.Listener
	outbound map[types.NamespacedName]map[int32]net.Listener
	conns    map[*proxiedConn]bool
	agents   []*http.Server // the agent's and Envoy's health ports
	stopped  bool
	// crashed: the proxy process is gone (Cluster.KillProxy) while the pod
	// stays in the mesh; nothing listens on its ports.
	crashed bool
}

func (s *sidecar) namespace() string { return s.w.Pod.Namespace }

func (s *sidecar) currentView() *meshView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.view
}

// receive applies a push: listeners for the destinations it names, the
// policies it carries (closing the plaintext connections they now
// refuse), and the pod's hosts file rewritten.
func (s *sidecar) receive(v *meshView) {
	s.mu.Lock()
	if s.stopped || s.view != nil && v.seq <= s.view.seq {
		s.mu.Unlock()
		return
	}
	s.view = v
	s.mu.Unlock()
	s.openOutbound(v)
	s.enforcePolicy()
	s.m.notifyChanged()
}

// mode is the PeerAuthentication mode of the pod's port in the sidecar's
// view.
func (s *sidecar) mode(port int32) MTLSMode {
	return effectiveMode(s.currentView().policies, s.w.Pod.Namespace, s.w.Labels, port)
}

// proxiedConn is one connection the sidecar carries, from the side that
// dialed it, to the side it dialed.
type proxiedConn struct {
	from      net.Conn
	port      int32
	plaintext bool // inbound, admitted without mTLS
	once      sync.Once
	// to is the dialed side, once dialed; a policy closes the connection
	// from another goroutine than the one that dials.
	mu sync.Mutex
	to net.Conn
}

// dialed records the dialed side of c.
func (c *proxiedConn) dialed(to net.Conn) {
	c.mu.Lock()
	c.to = to
	c.mu.Unlock()
}

func (c *proxiedConn) close() {
	c.once.Do(func() {
		_ = c.from.Close()
		c.mu.Lock()
		to := c.to
		c.mu.Unlock()
		if to != nil {
			_ = to.Close()
		}
	})
}

// listenInbound captures the pod's ports that iptables sends to the
// sidecar; with bypass, the others too, as plain forwards to the app.
func (s *sidecar) listenInbound(bypass bool) error {
	for _, port := range s.w.Ports {
		captured := s.w.Capture.capturesInbound(port)
		if !captured && !bypass {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(s.podIP, strconv.Itoa(int(port))))
		if err != nil {
			return fmt.Errorf("mesh: %s: inbound port %d: %w", s.w.Pod, port, err)
		}
		app := net.JoinHostPort(s.appIP, strconv.Itoa(int(port)))
		s.mu.Lock()
		if captured {
			s.inbound = append(s.inbound, l)
			go s.accept(l, func(conn net.Conn) { s.serveInbound(conn, port) })
		} else {
			s.bypass = append(s.bypass, l)
			go s.accept(l, func(conn net.Conn) { pipe(conn, app) })
		}
		s.mu.Unlock()
	}
	return nil
}

// openOutbound opens the listeners that stand for each destination of
// the view in this pod's hosts file (standsIn): on the destination's
// ports and the ports of the Services that select it. Destinations the
// view no longer has lose theirs.
func (s *sidecar) openOutbound(v *meshView) {
	known := map[types.NamespacedName]bool{}
	for _, dst := range v.endpoints {
		if !v.standsIn(s.w.Pod, dst) {
			continue
		}
		known[dst.Pod] = true
		ports := append([]int32(nil), dst.Ports...)
		for _, svc := range v.services {
			if svc.selects(dst) {
				for p := range svc.Ports {
					ports = append(ports, p)
				}
			}
		}
		for _, port := range ports {
			if err := s.listenOutbound(dst.Pod, port); err != nil {
				s.m.logf("mesh: %s: outbound listener for %s:%d: %v", s.w.Pod, dst.Pod, port, err)
			}
		}
	}
	s.mu.Lock()
	var gone []net.Listener
	for pod, ls := range s.outbound {
		if !known[pod] {
			for _, l := range ls {
				gone = append(gone, l)
			}
			delete(s.outbound, pod)
		}
	}
	s.mu.Unlock()
	for _, l := range gone {
		_ = l.Close()
	}
}

// listenOutbound opens the listener that stands for dst in this pod's
// hosts file on one port.
func (s *sidecar) listenOutbound(dst types.NamespacedName, port int32) error {
	ip, err := s.m.outboundIP(s.w.Pod, dst)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.crashed || s.outbound[dst][port] != nil {
		return nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	if s.outbound[dst] == nil {
		s.outbound[dst] = map[int32]net.Listener{}
	}
	s.outbound[dst][port] = l
	go s.accept(l, func(conn net.Conn) { s.serveOutbound(conn, dst, port) })
	return nil
}

func (s *sidecar) accept(l net.Listener, serve func(net.Conn)) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return // closed
		}
		go serve(conn)
	}
}

// serveInbound applies the port's mode to a connection from outside the
// pod. The mode is read per connection, so a policy change applies to the
// next one (and enforcePolicy to the established ones).
func (s *sidecar) serveInbound(conn net.Conn, port int32) {
	mode := s.mode(port)
	var from net.Conn = conn
	plaintext := true
	if mode != ModeDisable {
		// Waits for the client's first bytes, with no timeout.
		first, err := inspect(conn)
		if err != nil {
			_ = conn.Close()
			return
		}
		from = &prefixedConn{Conn: conn, prefix: first.prefix}
		switch {
		case first.istio || first.tls && mode == ModeStrict:
			// Envoy's STRICT filter chain matches any TLS, not only a
			// hello with Istio's ALPN: a foreign TLS client is shown
			// the sidecar's own certificate and then refused for want of
			// a mesh client certificate. Under PERMISSIVE such a client
			// passes through to the server, which shows its own.
			t := tls.Server(from, s.serverTLS())
			if err := t.Handshake(); err != nil {
				s.m.logf("mesh: %s: inbound %d: mTLS handshake: %v", s.w.Pod, port, err)
				_ = conn.Close()
				return
			}
			from, plaintext = t, false
		case mode == ModeStrict:
			s.m.logf("mesh: %s: inbound %d: STRICT refuses a connection without mTLS from %s", s.w.Pod, port, conn.RemoteAddr())
			_ = conn.Close()
			return
		}
	}
	s.forward(&proxiedConn{from: from, port: port, plaintext: plaintext}, net.JoinHostPort(s.appIP, strconv.Itoa(int(port))), nil)
}

// serveOutbound carries a connection of this pod's application to dst as
// the sidecar's view says (mesh_view.go): mTLS to dst's sidecar,
// verifying that it is dst's identity, or plaintext; on an HTTP or an
// undeclared port only after the client's first bytes.
func (s *sidecar) serveOutbound(conn net.Conn, dst types.NamespacedName, port int32) {
	v := s.currentView()
	e, ok := v.endpoint(dst)
	if !ok {
		_ = conn.Close()
		return
	}
	o := v.outbound(s.w.Capture, e.IP, port)
	to := net.JoinHostPort(e.IP, strconv.Itoa(int(port)))
	if o.Route == routeDirect {
		pipe(conn, to)
		return
	}
	from, ok := awaitProtocol(conn, o.Protocol)
	if !ok {
		return
	}
	var cfg *tls.Config
	if o.Route == routeMTLS {
		cfg = s.clientTLS(spiffeID(e.Pod.Namespace, e.ServiceAccount))
	}
	s.forward(&proxiedConn{from: from, port: port}, to, cfg)
}

// forward dials to (in TLS when cfg is set) and copies both ways until
// either side ends; a failed dial closes the client's connection, as
// Envoy resets a connection with no healthy upstream.
func (s *sidecar) forward(c *proxiedConn, to string, cfg *tls.Config) {
	if !s.track(c) {
		c.close()
		return
	}
	defer s.untrack(c)
	defer c.close()
	d := net.Dialer{Timeout: 5 * time.Second}
	up, err := d.Dial("tcp", to)
	if err == nil && cfg != nil {
		t := tls.Client(up, cfg)
		if err = t.Handshake(); err != nil {
			_ = up.Close()
		}
		up = t
	}
	if err != nil {
		s.m.logf("mesh: %s: to %s: %v", s.w.Pod, to, err)
		return
	}
	defer up.Close()
	c.dialed(up)
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c.from); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c.from, up); done <- struct{}{} }()
	<-done
}

func (s *sidecar) track(c *proxiedConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.conns[c] = true
	return true
}

func (s *sidecar) untrack(c *proxiedConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// enforcePolicy closes the plaintext connections the ports' modes now
// refuse.
func (s *sidecar) enforcePolicy() {
	s.mu.Lock()
	var refused []*proxiedConn
	for c := range s.conns {
		if c.plaintext && effectiveMode(s.view.policies, s.w.Pod.Namespace, s.w.Labels, c.port) == ModeStrict {
			refused = append(refused, c)
		}
	}
	s.mu.Unlock()
	for _, c := range refused {
		s.m.logf("mesh: %s: port %d is STRICT now: closing a plaintext connection", s.w.Pod, c.port)
		c.close()
	}
}

func (s *sidecar) closeListeners() {
	s.mu.Lock()
	ls := append([]net.Listener(nil), s.inbound...)
	for _, out := range s.outbound {
		for _, l := range out {
			ls = append(ls, l)
		}
	}
	s.inbound, s.outbound = nil, map[types.NamespacedName]map[int32]net.Listener{}
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	s.stopAgent()
}

// closeBypass closes the uncaptured ports' forwards: the pod is going.
func (s *sidecar) closeBypass() {
	s.mu.Lock()
	ls := s.bypass
	s.bypass = nil
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
}

// drain refuses new connections at once, keeps established ones for
// drain, then closes them all.
func (s *sidecar) drain(drain time.Duration) {
	s.closeListeners()
	deadline := time.Now().Add(drain)
	for time.Now().Before(deadline) && s.active() > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	s.mu.Lock()
	s.stopped = true
	conns := make([]*proxiedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	s.closeBypass()
}

func (s *sidecar) active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
