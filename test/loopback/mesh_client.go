package loopback

import (
	"crypto/tls"
	"net"
	"strconv"
	"sync"
	"time"
)

// MeshClient is a workload of the test process inside the mesh (the
// operator, a NATS client): its connections leave as its sidecar would
// send them, by the view istiod last pushed it (mesh_view.go). Toward a
// pod of a headless Service that is mTLS only when every pod the Service
// selects was injected, plaintext to all of them otherwise; an address
// the view does not know, or a port no headless Service of the pod
// declares, is dialed as it is. A client outside the mesh dials directly.
type MeshClient struct {
	m    *Mesh
	ns   string
	cert tls.Certificate
	ID   string

	mu   sync.Mutex
	view *meshView
}

// Client is a meshed client running as service account sa of namespace
// ns. It is pushed to from then on, as every proxy is.
func (m *Mesh) Client(ns, sa string) (*MeshClient, error) {
	cert, err := m.ca.workloadCert(ns, sa)
	if err != nil {
		return nil, err
	}
	c := &MeshClient{m: m, ns: ns, cert: cert, ID: spiffeID(ns, sa), view: m.current()}
	m.mu.Lock()
	m.clients[c] = true
	m.mu.Unlock()
	return c, nil
}

func (c *MeshClient) namespace() string { return c.ns }

func (c *MeshClient) receive(v *meshView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v.seq > c.view.seq {
		c.view = v
	}
}

// Dial suits nats.SetCustomDialer and Cluster-style dialers; address is
// an IP and a port.
func (c *MeshClient) Dial(network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	v := c.view
	c.mu.Unlock()
	o := v.outbound(captureAll, host, int32(port))
	d := net.Dialer{Timeout: 5 * time.Second}
	if o.Route == routeDirect {
		return d.Dial(network, address)
	}
	connect := func() (net.Conn, error) {
		conn, err := d.Dial(network, address)
		if err != nil || o.Route != routeMTLS {
			return conn, err
		}
		t := tls.Client(conn, meshClientTLS(c.m.ca, c.cert, spiffeID(o.Dst.Pod.Namespace, o.Dst.ServiceAccount)))
		if err := t.Handshake(); err != nil {
			_ = conn.Close()
			return nil, err
		}
		return t, nil
	}
	if o.Protocol == protocolTCP {
		return connect()
	}
	// The client's sidecar waits for the client's first bytes before it
	// connects upstream: the client talks to a pipe until then.
	app, proxy := net.Pipe()
	go func() {
		from, ok := awaitProtocol(proxy, o.Protocol)
		if !ok {
			return
		}
		defer from.Close()
		up, err := connect()
		if err != nil {
			return
		}
		defer up.Close()
		done := make(chan struct{}, 2)
		go func() { _, _ = copyConn(up, from); done <- struct{}{} }()
		go func() { _, _ = copyConn(from, up); done <- struct{}{} }()
		<-done
	}()
	return app, nil
}
