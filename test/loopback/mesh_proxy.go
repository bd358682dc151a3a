package loopback

import (
	"crypto/tls"
	"crypto/x509"
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
// outbound listeners per meshed destination, and every connection it
// carries (for the drain and for policy changes).
type sidecar struct {
	m            *Mesh
	w            meshWorkload
	cert         tls.Certificate
	id           string
	podIP, appIP string

	mu       sync.Mutex
	inbound  []net.Listener
	outbound map[types.NamespacedName][]net.Listener
	conns    map[*proxiedConn]bool
	agents   []*http.Server // the agent's and Envoy's health ports
	stopped  bool
	// crashed: the proxy process is gone (Cluster.KillProxy) while the pod
	// stays in the mesh; nothing listens on its ports.
	crashed bool
}

// proxiedConn is one connection the sidecar carries, from the side that
// dialed it, to the side it dialed.
type proxiedConn struct {
	from, to  net.Conn
	port      int32
	plaintext bool // inbound, admitted without mTLS
	once      sync.Once
}

func (c *proxiedConn) close() {
	c.once.Do(func() {
		_ = c.from.Close()
		if c.to != nil {
			_ = c.to.Close()
		}
	})
}

// listenInbound captures every declared port on the pod's address.
func (s *sidecar) listenInbound() error {
	for _, port := range s.w.Ports {
		l, err := net.Listen("tcp", net.JoinHostPort(s.podIP, strconv.Itoa(int(port))))
		if err != nil {
			return fmt.Errorf("mesh: %s: inbound port %d: %w", s.w.Pod, port, err)
		}
		s.inbound = append(s.inbound, l)
		go s.accept(l, func(conn net.Conn) { s.serveInbound(conn, port) })
	}
	return nil
}

// listenOutbound opens the listener that stands for dst in this pod's
// hosts file, on each of dst's declared ports.
func (s *sidecar) listenOutbound(dst meshWorkload) error {
	ip, err := s.m.outboundIP(s.w.Pod, dst.Pod)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.crashed || s.outbound[dst.Pod] != nil {
		return nil
	}
	for _, port := range dst.Ports {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(port))))
		if err != nil {
			return err
		}
		s.outbound[dst.Pod] = append(s.outbound[dst.Pod], l)
		go s.accept(l, func(conn net.Conn) { s.serveOutbound(conn, dst, port) })
	}
	return nil
}

func (s *sidecar) closeOutbound(dst types.NamespacedName) {
	s.mu.Lock()
	ls := s.outbound[dst]
	delete(s.outbound, dst)
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
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
	mode := s.m.mode(s.w, port)
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
		case first.istio:
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

// serveOutbound carries a connection of this pod's application to a meshed
// destination's sidecar in mTLS, verifying that it is dst's identity.
func (s *sidecar) serveOutbound(conn net.Conn, dst meshWorkload, port int32) {
	to := net.JoinHostPort(dst.IP, strconv.Itoa(int(port)))
	s.forward(&proxiedConn{from: conn, port: port}, to, s.clientTLS(spiffeID(dst.Pod.Namespace, dst.ServiceAccount)))
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
	s.mu.Lock()
	c.to = up
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
		if c.plaintext && s.m.mode(s.w, c.port) == ModeStrict {
			refused = append(refused, c)
		}
	}
	s.mu.Unlock()
	for _, c := range refused {
		s.m.logf("mesh: %s: port %d is STRICT now: closing a plaintext connection", s.w.Pod, c.port)
		c.close()
	}
}

// serverTLS requires a client certificate from the mesh's CA.
func (s *sidecar) serverTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{s.cert},
		ClientAuth:   tls.RequireAnyClientCert,
		NextProtos:   istioALPN,
		MinVersion:   tls.VersionTLS12,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, err := s.m.ca.verifyPeer(raw)
			return err
		},
	}
}

// clientTLS presents this workload's identity and accepts only want's.
func (s *sidecar) clientTLS(want string) *tls.Config {
	return meshClientTLS(s.m.ca, s.cert, want)
}

func meshClientTLS(ca *meshCA, cert tls.Certificate, want string) *tls.Config {
	return &tls.Config{
		Certificates:       []tls.Certificate{cert},
		NextProtos:         istioALPN,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // verified below: by SPIFFE identity, not host name
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			id, err := ca.verifyPeer(raw)
			if err == nil && id != want {
				err = fmt.Errorf("mesh: the server is %s, not %s", id, want)
			}
			return err
		},
	}
}

func (s *sidecar) closeListeners() {
	s.mu.Lock()
	ls := append([]net.Listener(nil), s.inbound...)
	for _, out := range s.outbound {
		ls = append(ls, out...)
	}
	s.inbound, s.outbound = nil, map[types.NamespacedName][]net.Listener{}
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	s.stopAgent()
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
}

func (s *sidecar) active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
