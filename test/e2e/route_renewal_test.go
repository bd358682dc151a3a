package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// TestRouteCertificateRenewsUnderPublishing: the route certificate from the
// operator's own CA falls due (the test puts in one from the same CA past
// two thirds of its life, as time would) while a client publishes to an R3
// stream. The operator issues a new one and the servers reload it: the
// same server processes (pod UIDs, process start), the new serial on 6222
// of every server (read from the certificate the port presents, verified
// against the CA), the same route connections and meta group, every
// acknowledged message stored. The same scene beside a client certificate
// from a cert-manager issuer runs in TestTLSEverywhereThroughCertManager.
//
// Careless operators it catches: one that writes the Secret and never
// reloads (run as a temporary change of sendReloads: 6222 kept the old
// serial for the 2 minutes allowed), one that restarts the servers to take
// a new certificate (new UIDs or starts), one that makes a new CA (the new
// certificate does not verify against the CA the test read first).
func TestRouteCertificateRenewsUnderPublishing(t *testing.T) {
	f := formCluster(t)
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: f.Cluster.CASecretName()}}
	get(t, caSecret)
	ca := pki.KeyPair{Cert: string(caSecret.Data[render.TLSCertKey]), Key: string(caSecret.Data[render.TLSKeyKey])}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(ca.Cert)) {
		t.Fatal("the route CA Secret holds no certificate")
	}
	renewRouteCertificateUnderPublishing(t, f, roots, plainMonitor{}, nil, func() { putDueRouteCertificate(t, f, ca) })
}

// putDueRouteCertificate makes f's route certificate due as time would:
// one issued 70 minutes ago for 90, past two thirds of its life, by the
// same CA for the same names, in the Secret the operator keeps.
func putDueRouteCertificate(t *testing.T, f *formed, ca pki.KeyPair) {
	t.Helper()
	old, err := pki.Issue(ca, f.Cluster.RouteDNSNames(render.DefaultClusterDomain), time.Now().Add(-70*time.Minute), 90*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: f.Cluster.RouteTLSSecretName()}}
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		s.Data[render.TLSCertKey], s.Data[render.TLSKeyKey] = []byte(old.Cert), []byte(old.Key)
		return cluster.Client.Update(testCtx(t), s)
	})
}

// monitorGetter reads a server's monitor port, over http or https.
type monitorGetter interface {
	get(f *formed, pod, path string, out any) error
}

type plainMonitor struct{}

func (plainMonitor) get(f *formed, pod, path string, out any) error {
	return monitor(f.IP(pod), path, out)
}

// tlsMonitor reads a monitor port behind TLS, verified against roots
// under the pod's DNS name.
type tlsMonitor struct{ roots *x509.CertPool }

func (m tlsMonitor) get(f *formed, pod, path string, out any) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: m.roots, ServerName: f.Cluster.PodDNSName(pod)}}}
	resp, err := hc.Get("https://" + net.JoinHostPort(f.IP(pod), "8222") + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s of %s: %s", path, pod, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// renewRouteCertificateUnderPublishing runs renew, which makes f's route
// certificate due or asks its issuer for a new one, while a client
// publishes to an R3 stream (pubOpts: its TLS), and checks that the
// servers took the new certificate by reload: the same pods and
// processes, the new serial on 6222 of every server verified against
// roots, the same route connections on every server, the meta group
// whole, every acknowledged message stored.
func renewRouteCertificateUnderPublishing(t *testing.T, f *formed, roots *x509.CertPool, mon monitorGetter, pubOpts []nats.Option, renew func()) {
	t.Helper()
	h := recordPods(t, f.NS)
	h.seen(t, f.Pods)
	before := map[string]string{}
	starts := map[string]time.Time{}
	routes := map[string][]string{}
	for _, p := range f.Pods {
		before[p] = routeSerial(t, f, p, roots)
		starts[p] = processStart(t, f, mon, p)
		routes[p] = routeConnections(t, f, mon, p)
	}
	pub, js, stream := startPublishing(t, f, pubOpts...)
	defer pub.Halt()
	eventually(t, wait, func() error {
		if n := pub.Count(); n < 100 {
			return fmt.Errorf("%d messages acknowledged before the renewal", n)
		}
		return nil
	})
	renewed := time.Now()
	renew()
	routeSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: f.Cluster.RouteTLSSecretName()}}
	var want string
	eventually(t, 2*time.Minute, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(routeSecret), routeSecret); err != nil {
			return err
		}
		cert, err := pki.ParseCert(string(routeSecret.Data[render.TLSCertKey]))
		if err != nil {
			return err
		}
		if want = cert.SerialNumber.String(); slices.Contains(mapValues(before), want) {
			return fmt.Errorf("the route Secret still holds serial %s", want)
		}
		for _, p := range f.Pods {
			got, err := tryRouteSerial(f, p, roots)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s presents serial %s on 6222, the Secret holds %s", p, got, want)
			}
		}
		return nil
	})
	took := time.Since(renewed)
	at := pub.Count()
	eventually(t, wait, func() error {
		if n := pub.Count(); n < at+100 {
			return fmt.Errorf("%d messages acknowledged since every server presented the new certificate, want 100", n-at)
		}
		return nil
	})
	pub.Halt()
	acked, stall := pub.Result()
	stored := storedCount(t, js, stream, acked)
	checkEveryIDStored(t, js, acked, stored)
	for _, p := range f.Pods {
		if n := len(h.uids(p)); n != 1 {
			t.Errorf("%s has had %d pods: the renewal replaced it", p, n)
		}
		if s := processStart(t, f, mon, p); !s.Equal(starts[p]) {
			t.Errorf("%s's server started at %s, before the renewal at %s: it restarted", p, s, starts[p])
		}
		if got := routeConnections(t, f, mon, p); !slices.Equal(got, routes[p]) {
			t.Errorf("%s's routes were %v before the renewal, %v after: a route was dropped", p, routes[p], got)
		}
	}
	metaWhole(t, f, mon)
	t.Logf("route certificate %v -> %s on every server %s after the renewal began; %d messages acknowledged, none lost; longest publish stall %s",
		mapValues(before), want, took.Round(time.Millisecond), acked, stall.Round(time.Millisecond))
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// routeSerial is the serial of the certificate pod's route port presents,
// verified against roots under the pod's DNS name.
func routeSerial(t *testing.T, f *formed, pod string, roots *x509.CertPool) string {
	t.Helper()
	var serial string
	eventually(t, wait, func() error {
		var err error
		serial, err = tryRouteSerial(f, pod, roots)
		return err
	})
	return serial
}

// tryRouteSerial dials 6222 as a route would: TLS from the first byte
// (the servers' routes handshake first); the handshake shows the port's
// certificate. The test has no client certificate, so the server ends the
// connection after; the client's side of a TLS 1.3 handshake is complete
// by then.
func tryRouteSerial(f *formed, pod string, roots *x509.CertPool) (string, error) {
	conn, err := cluster.Dial("tcp", net.JoinHostPort(f.IP(pod), "6222"))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	tc := tls.Client(conn, &tls.Config{RootCAs: roots, ServerName: f.Cluster.PodDNSName(pod), MinVersion: tls.VersionTLS13})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return "", fmt.Errorf("%s's route port: %w", pod, err)
	}
	return tc.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// processStart is when pod's server process started, from its /varz.
func processStart(t *testing.T, f *formed, mon monitorGetter, pod string) time.Time {
	t.Helper()
	var v struct {
		Start time.Time `json:"start"`
	}
	eventually(t, wait, func() error { return mon.get(f, pod, "/varz", &v) })
	return v.Start
}

// routeConnections lists pod's route connections (peer and connection id),
// sorted: a route dropped and dialled again has a new id.
func routeConnections(t *testing.T, f *formed, mon monitorGetter, pod string) []string {
	t.Helper()
	var out []string
	eventually(t, wait, func() error {
		var r struct {
			Routes []struct {
				Rid        uint64 `json:"rid"`
				RemoteName string `json:"remote_name"`
			} `json:"routes"`
		}
		if err := mon.get(f, pod, "/routez", &r); err != nil {
			return err
		}
		out = out[:0]
		peers := map[string]bool{}
		for _, rt := range r.Routes {
			out = append(out, fmt.Sprintf("%s#%d", rt.RemoteName, rt.Rid))
			peers[rt.RemoteName] = true
		}
		if len(peers) != len(f.Pods)-1 {
			return fmt.Errorf("%s has routes to %v, want every other server", pod, peers)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// metaWhole: every server sees the meta group of all servers with a
// leader, and the leader sees every other member current.
func metaWhole(t *testing.T, f *formed, mon monitorGetter) {
	t.Helper()
	for _, p := range f.Pods {
		var j jsz
		if err := mon.get(f, p, "/jsz", &j); err != nil {
			t.Fatal(err)
		}
		if j.Meta == nil || j.Meta.Leader == "" || j.Meta.Size != len(f.Pods) {
			t.Fatalf("%s's meta group after the renewal: %+v", p, j.Meta)
		}
		if j.Meta.Leader != p {
			continue
		}
		for _, r := range j.Meta.Replicas {
			if !r.Current || r.Offline {
				t.Errorf("meta group after the renewal: %s current %v offline %v", r.Name, r.Current, r.Offline)
			}
		}
	}
}
