package loopback

import (
	"crypto/tls"
	"net"
	"time"
)

// MeshClient is a workload of the test process inside the mesh (the
// operator, a NATS client): its connections leave as its sidecar would
// send them, mTLS with its own identity to pods that have a sidecar,
// plaintext to the others. A client outside the mesh dials directly.
type MeshClient struct {
	m    *Mesh
	cert tls.Certificate
	ID   string
}

// Client is a meshed client running as service account sa of namespace ns.
func (m *Mesh) Client(ns, sa string) (*MeshClient, error) {
	cert, err := m.ca.workloadCert(ns, sa)
	if err != nil {
		return nil, err
	}
	return &MeshClient{m: m, cert: cert, ID: spiffeID(ns, sa)}, nil
}

// Dial suits nats.SetCustomDialer and Cluster-style dialers.
func (c *MeshClient) Dial(network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	dst, ok := c.m.workloadAt(host)
	if !ok {
		return d.Dial(network, address)
	}
	conn, err := d.Dial(network, address)
	if err != nil {
		return nil, err
	}
	t := tls.Client(conn, meshClientTLS(c.m.ca, c.cert, spiffeID(dst.Pod.Namespace, dst.ServiceAccount)))
	if err := t.Handshake(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return t, nil
}

// workloadAt is the meshed workload whose pod address is ip.
func (m *Mesh) workloadAt(ip string) (meshWorkload, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.workloads {
		if s.podIP == ip {
			return s.w, true
		}
	}
	return meshWorkload{}, false
}
