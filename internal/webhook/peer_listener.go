package webhook

import (
	"net"
	"sync"
)

// maxConnectionsPerPeer is how many of a replica's maxConnections one
// remote address may hold. The API server speaks HTTP/2 to the webhook
// and needs one or two connections; a peer that opens more is closed at
// once, so that one pod flooding the port cannot take every slot and turn
// the webhook off (its failure policy is Ignore: a webhook that answers
// no one admits everything).
const maxConnectionsPerPeer = 8

// perPeerListener closes, as soon as it is accepted, a connection whose
// remote address already holds max open connections, and keeps
// accepting. Under netutil.LimitListener, such a connection never takes
// one of the replica's slots.
type perPeerListener struct {
	net.Listener
	max int

	mu   sync.Mutex
	open map[string]int // by remote IP
}

func limitPerPeer(ln net.Listener, max int) net.Listener {
	return &perPeerListener{Listener: ln, max: max, open: map[string]int{}}
}

// Accept returns the next connection of a peer under its bound.
func (l *perPeerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := remoteIP(c)
		if !l.take(peer) {
			_ = c.Close()
			continue
		}
		return &peerConn{Conn: c, release: func() { l.release(peer) }}, nil
	}
}

func (l *perPeerListener) take(peer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[peer] >= l.max {
		return false
	}
	l.open[peer]++
	return true
}

func (l *perPeerListener) release(peer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[peer]--; l.open[peer] <= 0 {
		delete(l.open, peer) // the map holds only peers with open connections
	}
}

// remoteIP is the connection's remote address without its port: a peer
// is an address, whatever ports it dials from.
func remoteIP(c net.Conn) string {
	addr := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// peerConn gives its peer's place back once, on the first Close.
type peerConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *peerConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
