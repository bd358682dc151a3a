package loopback

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// silenceWindow is how long a negative assertion about a connection holds.
const silenceWindow = 3 * time.Second

// TestMeshPermissiveHangsServerFirstClient: on a PERMISSIVE port the
// sidecar decides by the client's first bytes; a plaintext NATS client
// waits for the server's INFO and so never sends any: it hangs, as Istio
// documents for server-first protocols. A client that speaks first is
// passed, and a meshed client is served over mTLS.
func TestMeshPermissiveHangsServerFirstClient(t *testing.T) {
	t.Parallel()
	l := newMeshLab(t)
	p := l.pod("nats-0", true)
	l.start(p)
	addr := l.pods["nats-0"].w.IP + ":4222"

	if line, err := firstLine(addr, "", silenceWindow); err == nil || line != "" {
		t.Fatalf("a plaintext client got %q (%v) from a PERMISSIVE port: it must wait for its first bytes forever", line, err)
	}
	if line, err := firstLine(addr, "PING\r\n", silenceWindow); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("a plaintext client that speaks first: %q, %v; want INFO", line, err)
	}
	assertMeshedClientWorks(t, l, addr)
}

// TestMeshStrictRefusesClientsOutsideTheMesh: under STRICT nothing without
// the mesh's mTLS reaches the server: a server-first client hears nothing,
// one that speaks first is closed, TLS that is not the mesh's (no Istio
// ALPN, or a certificate of another CA) is never served; a TLS client
// without a mesh certificate is shown the sidecar's own certificate (its
// SPIFFE identity), as Envoy's STRICT filter chain shows it, not the
// server's; the meshed client works. DISABLE passes plaintext.
func TestMeshStrictRefusesClientsOutsideTheMesh(t *testing.T) {
	t.Parallel()
	l := newMeshLab(t)
	p := l.pod("nats-0", true)
	l.start(p)
	addr := l.pods["nats-0"].w.IP + ":4222"
	l.mesh.SetPeerAuthentications([]PeerAuthentication{{Namespace: labNS, Name: "nats", Selector: map[string]string{"app": "nats"}, Mode: ModeStrict}})

	if line, err := firstLine(addr, "", silenceWindow); line != "" {
		t.Fatalf("a plaintext client got %q (%v) under STRICT", line, err)
	}
	if line, err := firstLine(addr, "PING\r\n", silenceWindow); line != "" || !closedByPeer(err) {
		t.Fatalf("a plaintext client that speaks first: %q, %v; want the connection closed unserved", line, err)
	}
	if _, err := nats.Connect("nats://"+addr, nats.NoReconnect(), nats.Timeout(2*time.Second)); err == nil {
		t.Fatal("a NATS client outside the mesh connected under STRICT")
	}
	var shown []*x509.Certificate
	plainTLS := &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
		shown = cs.PeerCertificates
		return nil
	}}
	if conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, plainTLS); err == nil {
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err = conn.Read(make([]byte, 1)); err == nil {
			t.Fatal("a TLS client without the mesh's certificate was served under STRICT")
		}
		conn.Close()
	}
	if len(shown) == 0 || len(shown[0].URIs) != 1 || shown[0].URIs[0].String() != spiffeID(labNS, "nats") {
		t.Fatalf("a TLS client without the mesh's ALPN was shown %v, want the sidecar's certificate (%s)", shown, spiffeID(labNS, "nats"))
	}
	stranger, err := newMesh(l.addrs, t.Logf)
	must(t, err)
	strangerCert, err := stranger.ca.workloadCert(labNS, "nats")
	must(t, err)
	foreign := meshClientTLS(l.mesh.ca, strangerCert, spiffeID(labNS, "nats"))
	if conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, foreign); err == nil {
		// TLS 1.3: the server's verdict on the client certificate arrives
		// with the first read.
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err = conn.Read(make([]byte, 1)); err == nil {
			t.Fatal("a client with a certificate of another CA was served under STRICT")
		}
		conn.Close()
	}
	assertMeshedClientWorks(t, l, addr)

	l.mesh.SetPeerAuthentications([]PeerAuthentication{{Namespace: labNS, Name: "nats", Selector: map[string]string{"app": "nats"}, Mode: ModeStrict,
		PortLevel: map[int32]MTLSMode{4222: ModeDisable}}})
	nc, err := nats.Connect("nats://"+addr, nats.NoReconnect(), nats.Timeout(2*time.Second))
	if err != nil {
		t.Fatalf("a plaintext client on a DISABLE port: %v", err)
	}
	nc.Close()
}

// TestMeshedClientReachesMeshedServerOverMTLS: the meshed client's
// connection is mTLS with the server's SPIFFE identity, and a NATS
// round trip works through both proxies.
func TestMeshedClientReachesMeshedServerOverMTLS(t *testing.T) {
	t.Parallel()
	l := newMeshLab(t)
	p := l.pod("nats-0", true)
	l.start(p)
	addr := l.pods["nats-0"].w.IP + ":4222"
	l.mesh.SetPeerAuthentications([]PeerAuthentication{{Namespace: labNS, Name: "nats", Selector: map[string]string{"app": "nats"}, Mode: ModeStrict}})

	client, err := l.mesh.Client("apps", "publisher")
	must(t, err)
	conn, err := client.Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	state := conn.(*tls.Conn).ConnectionState()
	if len(state.PeerCertificates) == 0 || len(state.PeerCertificates[0].URIs) != 1 ||
		state.PeerCertificates[0].URIs[0].String() != "spiffe://cluster.local/ns/mesh/sa/nats" {
		t.Fatalf("server identity %+v, want spiffe://cluster.local/ns/mesh/sa/nats", state.PeerCertificates)
	}
	if state.NegotiatedProtocol != "istio-peer-exchange" {
		t.Errorf("ALPN %q, want Istio's", state.NegotiatedProtocol)
	}
	assertMeshedClientWorks(t, l, addr)
}

// TestMeshStraightToStrictBreaksMixedCluster: a three-server cluster with
// one pod still without its sidecar forms every route under PERMISSIVE;
// switched straight to STRICT it loses them. Because one pod of the
// headless Service has no sidecar, the meshed servers' sidecars send
// plaintext to every pod of it (auto mTLS is all-or-nothing there), which
// the meshed peer's STRICT port refuses; the unmeshed server's own dials
// to meshed peers are refused too. Only the routes a meshed server dials
// to the unmeshed one remain.
func TestMeshStraightToStrictBreaksMixedCluster(t *testing.T) {
	t.Parallel()
	l := newMeshLab(t)
	pods := []*labPod{l.pod("nats-0", true), l.pod("nats-1", true), l.pod("nats-2", false)}
	for _, p := range pods {
		l.start(p)
	}
	full := map[string][]string{"nats-0": {"nats-1", "nats-2"}, "nats-1": {"nats-0", "nats-2"}, "nats-2": {"nats-0", "nats-1"}}
	l.eventuallyRoutes(pods, full)

	l.mesh.SetPeerAuthentications([]PeerAuthentication{{Namespace: labNS, Name: "nats", Selector: map[string]string{"app": "nats"}, Mode: ModeStrict}})
	broken := map[string][]string{"nats-0": {"nats-2"}, "nats-1": {"nats-2"}, "nats-2": {"nats-0", "nats-1"}}
	l.eventuallyRoutes(pods, broken)
	// And it stays broken: the servers keep retrying, the sidecars keep
	// refusing.
	for end := time.Now().Add(silenceWindow); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got := l.routes(pods); !equalRoutes(got, broken) {
			t.Fatalf("routes under STRICT %v, want %v", got, broken)
		}
	}

	// PERMISSIVE again: the cluster heals.
	l.mesh.SetPeerAuthentications(nil)
	l.eventuallyRoutes(pods, full)
}

// assertMeshedClientWorks: a meshed NATS client publishes and receives.
func assertMeshedClientWorks(t *testing.T, l *meshLab, addr string) {
	t.Helper()
	client, err := l.mesh.Client("apps", "client")
	must(t, err)
	nc, err := nats.Connect("nats://"+addr, nats.SetCustomDialer(client), nats.NoReconnect(), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("meshed client: %v", err)
	}
	assertRoundTrip(t, nc)
}

// assertRoundTrip: nc, a meshed client, receives what it publishes; it is
// closed after.
func assertRoundTrip(t *testing.T, nc *nats.Conn) {
	t.Helper()
	defer nc.Close()
	sub, err := nc.SubscribeSync("mesh.test")
	must(t, err)
	must(t, nc.Publish("mesh.test", []byte("hello")))
	if msg, err := sub.NextMsg(5 * time.Second); err != nil || string(msg.Data) != "hello" {
		t.Fatalf("meshed round trip: %v, %v", msg, err)
	}
}

// closedByPeer: the other side ended the connection (rather than a read
// deadline passing).
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// firstLine connects, sends send (if any) and reads the first line the
// server answers within window.
func firstLine(addr, send string, window time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if send != "" {
		if _, err := conn.Write([]byte(send)); err != nil {
			return "", err
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(window))
	return bufio.NewReader(conn).ReadString('\n')
}

// routesOf is the names of the servers the one at ip has routes to.
func routesOf(ip string) ([]string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + ip + ":8222/routez")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var rz struct {
		Routes []struct {
			RemoteName string `json:"remote_name"`
		} `json:"routes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rz); err != nil {
		return nil, err
	}
	var names []string
	for _, r := range rz.Routes {
		if !slices.Contains(names, r.RemoteName) {
			names = append(names, r.RemoteName)
		}
	}
	slices.Sort(names)
	return names, nil
}

func (l *meshLab) routes(pods []*labPod) map[string][]string {
	got := map[string][]string{}
	for _, p := range pods {
		names, err := routesOf(l.listenIP(p))
		if err != nil {
			names = []string{"error: " + err.Error()}
		}
		got[p.w.Pod.Name] = names
	}
	return got
}

func (l *meshLab) eventuallyRoutes(pods []*labPod, want map[string][]string) {
	l.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := l.routes(pods)
		if equalRoutes(got, want) {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("routes %v, want %v\nnats-0:\n%s", got, want, tailString(l.serverLog(pods[0]), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func equalRoutes(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
