package e2e_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/loopback"
)

// TestTLSEverywhereThroughCertManager: a cluster whose clients and
// monitoring get their certificate from real cert-manager controllers (a
// self-signed issuer bootstraps a CA issuer), its routes from the
// operator's own route CA (no issuer is asked for a CA), forms and serves
// JetStream; a
// client that has only the credentials Secret (a tls:// URL and ca.crt)
// connects, publishes and consumes; a client without TLS is refused. Then
// the client certificate is renewed: the same server processes serve the
// new serial after a reload, and a connection open all along never drops.
// Last the route certificate is renewed under publishing beside the
// issued client certificate, as TestRouteCertificateRenewsUnderPublishing
// renews it without (renewRouteCertificateUnderPublishing: same processes,
// the new serial on 6222, the same routes and meta group, every
// acknowledged message kept).
func TestTLSEverywhereThroughCertManager(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	if err := loopback.CreateYAML(testCtx(t), cluster.Client, ns, loopback.CAIssuerYAML("ca", "nats-ca-root")); err != nil {
		t.Fatal(err)
	}
	f := formNamed(t, ns, "secure", func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: &v1alpha1.IssuerRef{Name: "ca"}}
		s.TLS.Monitor = &v1alpha1.MonitorTLSSpec{}
	})
	checkCertificatesReady(t, f)
	// The operator read the version from /varz over https, verifying it.
	if f.Cluster.Status.ServerVersionSource != v1alpha1.VersionObserved {
		t.Errorf("server version %s (%s): the operator could not read /varz over https", f.Cluster.Status.ServerVersion, f.Cluster.Status.ServerVersionSource)
	}
	creds := credentials(t, f)
	if !strings.HasPrefix(creds["url"], "tls://") || creds["ca.crt"] == "" {
		t.Fatalf("credentials Secret: url %s, ca.crt %d bytes; want a tls:// URL and the CA", redact(creds["url"]), len(creds["ca.crt"]))
	}
	if got := f.Cluster.Status.Endpoint.Internal; !strings.HasPrefix(got, "tls://") {
		t.Errorf("status endpoint %s, want tls://", got)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(creds["ca.crt"])) {
		t.Fatal("ca.crt holds no certificate")
	}

	// A user of the credentials Secret alone, through the client Service.
	var drops atomic.Int32
	steady, err := connect(t, creds["url"], nats.SetCustomDialer(dialer{}), nats.Secure(&tls.Config{RootCAs: roots}),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { drops.Add(1) }))
	if err != nil {
		t.Fatalf("a client with the credentials Secret: %v", err)
	}
	roundTripJetStream(t, steady)
	plaintextRefused(t, f.IP(f.Pods[1]), creds["user"], creds["password"])

	// Rotation: the servers serve the renewed certificate after a reload.
	pod := f.Pods[0]
	before := servedSerial(t, f, pod, roots)
	startedBefore := serverStart(t, f, pod, roots)
	if err := loopback.TriggerRenewal(testCtx(t), cluster.Client, ns, "secure-client"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() error {
		got, err := tryServedSerial(t, f, pod, roots)
		switch {
		case err != nil:
			return err
		case got == before:
			return fmt.Errorf("%s still serves serial %s", pod, before)
		}
		return nil
	})
	// Confirmed: a client connecting now is not refused.
	waitConfigLoadedNow(t, f)
	t.Logf("%s served serial %s, after the renewal %s", pod, before, servedSerial(t, f, pod, roots))
	if started := serverStart(t, f, pod, roots); !started.Equal(startedBefore) {
		t.Errorf("%s restarted (started %s, before %s): a renewal must be a reload", pod, started, startedBefore)
	}
	if n := drops.Load(); n != 0 || !steady.IsConnected() {
		t.Errorf("the steady client dropped %d times (connected %v): a reload keeps clients", n, steady.IsConnected())
	}
	roundTripJetStream(t, steady)
	checkCertificatesReady(t, f)

	// The route certificate, signed by the operator with the cluster's
	// own route CA (<name>-ca), falls due.
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.Cluster.CASecretName()}}
	get(t, caSecret)
	routeCA := pki.KeyPair{Cert: string(caSecret.Data[render.TLSCertKey]), Key: string(caSecret.Data[render.TLSKeyKey])}
	routeRoots := x509.NewCertPool()
	if !routeRoots.AppendCertsFromPEM([]byte(routeCA.Cert)) {
		t.Fatal("the route CA Secret holds no certificate")
	}
	renewRouteCertificateUnderPublishing(t, f, routeRoots, tlsMonitor{roots}, []nats.Option{nats.Secure(&tls.Config{RootCAs: roots})}, func() {
		putDueRouteCertificate(t, f, routeCA)
	})
}

// dialer resolves cluster DNS names through the loopback cluster.
type dialer struct{}

func (dialer) Dial(network, address string) (net.Conn, error) { return cluster.Dial(network, address) }

// checkCertificatesReady: the condition is True and the expiry shown.
func checkCertificatesReady(t *testing.T, f *formed) {
	t.Helper()
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(f.Cluster), f.Cluster); err != nil {
			return err
		}
		c := meta.FindStatusCondition(f.Cluster.Status.Conditions, v1alpha1.ConditionCertificatesReady)
		if c == nil || c.Status != metav1.ConditionTrue || f.Cluster.Status.CertificatesExpiry == nil {
			return fmt.Errorf("CertificatesReady %+v, expiry %v", c, f.Cluster.Status.CertificatesExpiry)
		}
		return nil
	})
}

// roundTripJetStream publishes to an R3 stream and reads the message back.
func roundTripJetStream(t *testing.T, nc *nats.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), wait)
	defer cancel()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var stream natsjs.Stream
	eventually(t, wait, func() error {
		stream, err = js.CreateOrUpdateStream(ctx, natsjs.StreamConfig{Name: "SECURE", Subjects: []string{"secure.>"}, Replicas: 3})
		return err
	})
	id := fmt.Sprint(time.Now().UnixNano())
	if _, err := js.Publish(ctx, "secure.msg", []byte(id)); err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, "secure.msg")
	if err != nil || string(msg.Data) != id {
		t.Fatalf("read back %v (%v), want %s", msg, err, id)
	}
}

// servedSerial is the serial of the client certificate the server at pod
// presents to a new TLS client now.
func servedSerial(t *testing.T, f *formed, pod string, roots *x509.CertPool) string {
	t.Helper()
	serial, err := tryServedSerial(t, f, pod, roots)
	if err != nil {
		t.Fatal(err)
	}
	return serial
}

// tryServedSerial is servedSerial for a look that may be retried: while
// the operator reloads the servers for a renewed certificate, nats-server
// re-checks every connection at each reload and refuses one that has not
// sent CONNECT yet (Authorization Violation), as any client connecting
// then would see.
func tryServedSerial(t *testing.T, f *formed, pod string, roots *x509.CertPool) (string, error) {
	creds := credentials(t, f)
	url := fmt.Sprintf("tls://%s.%s-headless.%s.svc:4222", pod, f.Cluster.Name, f.NS)
	nc, err := nats.Connect(url, nats.UserInfo(creds["user"], creds["password"]), nats.SetCustomDialer(dialer{}),
		nats.Secure(&tls.Config{RootCAs: roots}), nats.NoReconnect(), nats.Timeout(5*time.Second))
	if err != nil {
		return "", fmt.Errorf("TLS client of %s: %w", pod, err)
	}
	defer nc.Close()
	state, err := nc.TLSConnectionState()
	if err != nil || len(state.PeerCertificates) == 0 {
		return "", fmt.Errorf("no TLS state from %s: %v", pod, err)
	}
	return state.PeerCertificates[0].SerialNumber.String(), nil
}

// serverStart is when the server at pod started, from /varz over https,
// verified against the CA under the pod's DNS name.
func serverStart(t *testing.T, f *formed, pod string, roots *x509.CertPool) time.Time {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: fmt.Sprintf("%s.%s-headless.%s.svc", pod, f.Cluster.Name, f.NS)}}}
	resp, err := hc.Get("https://" + net.JoinHostPort(f.IP(pod), "8222") + "/varz")
	if err != nil {
		t.Fatalf("https monitoring of %s: %v", pod, err)
	}
	defer resp.Body.Close()
	var v struct {
		Start time.Time `json:"start"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	// Go's TLS listener answers plain http with a 400.
	if plain, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + net.JoinHostPort(f.IP(pod), "8222") + "/varz"); err == nil {
		plain.Body.Close()
		if plain.StatusCode == http.StatusOK {
			t.Errorf("%s serves /varz over plain http too", pod)
		}
	}
	return v.Start
}

// plaintextRefused: a client that speaks no TLS, credentials and all, gets
// no PONG from the client port, only the INFO that asks for TLS.
func plaintextRefused(t *testing.T, ip, user, password string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, "4222"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("client port INFO %q (%v), want tls_required", info, err)
	}
	connect, _ := json.Marshal(map[string]any{"user": user, "pass": password, "verbose": false, "tls_required": false})
	if _, err := fmt.Fprintf(conn, "CONNECT %s\r\nPING\r\n", connect); err != nil {
		return // closed already: refused
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // closed: refused
		}
		if strings.HasPrefix(line, "PONG") {
			t.Fatal("a plaintext client got a PONG from a TLS client port")
		}
	}
}

// TestClientCertificatesAreVerified: with spec.tls.client.verify, from a
// Secret of the user's own (opted in for kubenats), a client must present
// a certificate from the cluster's client CA: none, or one from another
// CA, is refused; the right one is let in. The operator itself keeps
// working (its Stream is created through the verified port).
func TestClientCertificatesAreVerified(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	now := time.Now()
	ca := mustPKI(pki.NewCA("clients CA", now, time.Hour))
	serverCert := mustPKI(pki.Issue(ca, []string{"verified", "verified." + ns + ".svc", "*.verified-headless." + ns + ".svc"}, now, time.Hour))
	if err := cluster.Client.Create(testCtx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "verified-tls", Labels: map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}},
		Type:       corev1.SecretTypeTLS,
		StringData: map[string]string{"tls.crt": serverCert.Cert, "tls.key": serverCert.Key, "ca.crt": ca.Cert},
	}); err != nil {
		t.Fatal(err)
	}
	f := formNamed(t, ns, "verified", func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "verified-tls", Verify: true}
	})
	creds := credentials(t, f)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(creds["ca.crt"]))
	client := mustPKI(pki.Issue(ca, []string{"a-client"}, now, time.Hour))
	other := mustPKI(pki.NewCA("another CA", now, time.Hour))
	stranger := mustPKI(pki.Issue(other, []string{"a-client"}, now, time.Hour))
	tlsWith := func(kp *pki.KeyPair) nats.Option {
		cfg := &tls.Config{RootCAs: roots}
		if kp != nil {
			pair, err := tls.X509KeyPair([]byte(kp.Cert), []byte(kp.Key))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		return nats.Secure(cfg)
	}
	for name, kp := range map[string]*pki.KeyPair{"no certificate": nil, "a certificate from another CA": &stranger} {
		if nc, err := connect(t, creds["url"], nats.SetCustomDialer(dialer{}), tlsWith(kp)); err == nil {
			// TLS 1.3 reports the refusal after the handshake.
			if err := nc.Flush(); err == nil {
				t.Errorf("a client with %s was let in", name)
			}
		}
	}
	nc, err := connect(t, creds["url"], nats.SetCustomDialer(dialer{}), tlsWith(&client))
	if err != nil {
		t.Fatalf("a client with a certificate of the client CA: %v", err)
	}
	roundTripJetStream(t, nc)
	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "through-verify"},
		Spec: v1alpha1.StreamSpec{Name: "VERIFIED", Subjects: []string{"verified.>"}}}
	stream.Spec.Cluster = &v1alpha1.ClusterRef{Name: "verified"}
	if err := cluster.Client.Create(testCtx(t), stream); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, stream, formTimeout)
}

func mustPKI(kp pki.KeyPair, err error) pki.KeyPair {
	if err != nil {
		panic(err)
	}
	return kp
}

// TestTLSFirstClients: with spec.tls.client.handshakeFirst the client port
// speaks TLS from its first byte: a client that handshakes first connects,
// one that waits for INFO hears nothing, and the operator's own connections
// (its Stream, the status' server version over the system account) work.
func TestTLSFirstClients(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	now := time.Now()
	ca := mustPKI(pki.NewCA("tls-first CA", now, time.Hour))
	serverCert := mustPKI(pki.Issue(ca, []string{"first", "first." + ns + ".svc", "*.first-headless." + ns + ".svc"}, now, time.Hour))
	if err := cluster.Client.Create(testCtx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first-tls", Labels: map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}},
		Type:       corev1.SecretTypeTLS,
		StringData: map[string]string{"tls.crt": serverCert.Cert, "tls.key": serverCert.Key, "ca.crt": ca.Cert},
	}); err != nil {
		t.Fatal(err)
	}
	f := formNamed(t, ns, "first", func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "first-tls", HandshakeFirst: true}
	})
	creds := credentials(t, f)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(creds["ca.crt"]))
	nc, err := connect(t, creds["url"], nats.SetCustomDialer(dialer{}), nats.Secure(&tls.Config{RootCAs: roots}), nats.TLSHandshakeFirst())
	if err != nil {
		t.Fatalf("a TLS-first client: %v", err)
	}
	roundTripJetStream(t, nc)

	// A client that waits for INFO first hears nothing: the server waits
	// for a ClientHello.
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(f.IP(f.Pods[0]), "4222"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, _ := conn.Read(make([]byte, 64)); n > 0 {
		t.Errorf("a TLS-first port said %d bytes before the handshake", n)
	}

	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls-first"},
		Spec: v1alpha1.StreamSpec{Name: "FIRST", Subjects: []string{"first.>"}}}
	stream.Spec.Cluster = &v1alpha1.ClusterRef{Name: "first"}
	if err := cluster.Client.Create(testCtx(t), stream); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, stream, formTimeout)
	if f.Cluster.Status.ServerVersionSource != v1alpha1.VersionObserved {
		t.Errorf("server version %s (%s): the operator could not read it over TLS", f.Cluster.Status.ServerVersion, f.Cluster.Status.ServerVersionSource)
	}
}
