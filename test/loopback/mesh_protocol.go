package loopback

import (
	"io"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What a client's sidecar makes of a Service port, as istiod derives it
// (istio.io/istio pkg/config/kube ConvertProtocol): the port's
// appProtocol, else the prefix of its name before the first '-'. Envoy's
// outbound listener then treats the connection by that protocol: TCP-like
// ports are proxied from the first byte, HTTP ports wait for a request,
// and a port of no known protocol waits for the client's first bytes to
// sniff one (no timeout by default), which hangs a client of a protocol
// whose server speaks first.

// meshProtocol is how a client sidecar handles a port.
type meshProtocol int

const (
	// protocolSniffed: no declared protocol; Envoy waits for the client's
	// first bytes before it connects upstream.
	protocolSniffed meshProtocol = iota
	// protocolTCP: tcp, tls, https, mongo, redis, mysql: proxied at once.
	protocolTCP
	// protocolHTTP: http, http2, grpc, grpc-web, http_proxy: the client
	// must send an HTTP request first.
	protocolHTTP
	// protocolUDP is not proxied by the sidecar.
	protocolUDP
)

func (p meshProtocol) String() string {
	switch p {
	case protocolTCP:
		return "tcp"
	case protocolHTTP:
		return "http"
	case protocolUDP:
		return "udp"
	}
	return "sniffed"
}

// wellKnownTCPPorts are the ports Istio counts as TCP when a name declares
// nothing: SMTP, DNS, MySQL and MongoDB.
var wellKnownTCPPorts = map[int32]bool{25: true, 53: true, 3306: true, 27017: true}

// protocolOf is the protocol of a Service port.
func protocolOf(sp corev1.ServicePort) meshProtocol {
	if sp.Protocol == corev1.ProtocolUDP {
		return protocolUDP
	}
	name := sp.Name
	if sp.AppProtocol != nil {
		name = *sp.AppProtocol
		switch name {
		case "kubernetes.io/h2c", "kubernetes.io/ws":
			return protocolHTTP
		case "kubernetes.io/wss":
			return protocolTCP
		}
	}
	if strings.HasPrefix(strings.ToLower(name), "grpc-web") {
		return protocolHTTP
	}
	if i := strings.IndexByte(name, '-'); i >= 0 {
		name = name[:i]
	}
	switch strings.ToLower(name) {
	case "tcp", "tls", "https", "mongo", "redis", "mysql":
		return protocolTCP
	case "http", "http2", "grpc", "http_proxy":
		return protocolHTTP
	case "udp":
		return protocolUDP
	}
	if wellKnownTCPPorts[sp.Port] {
		return protocolTCP
	}
	return protocolSniffed
}

// looksLikeHTTP: the first bytes start an HTTP/1 request line (a method
// token and a space) or HTTP/2's preface.
func looksLikeHTTP(first []byte) bool {
	s := string(first)
	if strings.HasPrefix(s, "PRI * HTTP/2") {
		return true
	}
	for _, m := range []string{"GET ", "HEAD ", "POST ", "PUT ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "} {
		if strings.HasPrefix(s, m) || strings.HasPrefix(m, s) && len(s) > 0 {
			return true
		}
	}
	return false
}

// awaitProtocol holds a client's connection as Envoy's outbound listener
// does for the port's protocol: a TCP port passes at once; an HTTP or an
// undeclared port waits for the client's first bytes (with no timeout),
// and an HTTP port answers what is not an HTTP request with 400 and
// closes. ok false: the connection was closed.
func awaitProtocol(conn net.Conn, p meshProtocol) (_ net.Conn, ok bool) {
	if p == protocolTCP {
		return conn, true
	}
	buf := make([]byte, 4096)
	n, _ := conn.Read(buf)
	if n == 0 {
		_ = conn.Close()
		return nil, false
	}
	if p == protocolHTTP && !looksLikeHTTP(buf[:n]) {
		_, _ = conn.Write([]byte("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"))
		_ = conn.Close()
		return nil, false
	}
	return &prefixedConn{Conn: conn, prefix: buf[:n]}, true
}

// pipe carries conn to the address to as it is, both ways, until either
// side ends: traffic the sidecar does not touch.
func pipe(conn net.Conn, to string) {
	defer conn.Close()
	up, err := (&net.Dialer{Timeout: 5 * time.Second}).Dial("tcp", to)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, up); done <- struct{}{} }()
	<-done
}

func copyConn(dst, src net.Conn) (int64, error) { return io.Copy(dst, src) }
