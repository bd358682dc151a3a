package e2e_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// rogueWindow is how long a refused server is watched for: long enough for
// many of its route reconnects (one a second) and a gossip round.
const rogueWindow = 10 * time.Second

// What a victim's server writes when it refuses a route, one line per
// attempt: the password layer, and the TLS layer (nats-server 2.15).
const (
	refusedByPassword = "authentication error"
	refusedByTLS      = "TLS route handshake error"
)

// TestRoutesRefuseAnotherCluster: the attacker runs a NatsCluster of its
// own, in its own namespace, named as the victim is, and takes what that
// cluster gives it (its route password, its route certificate and key) to
// a nats-server of its making that dials a victim's route port. Each layer
// is tried alone, the other one given away as if leaked, and each must
// refuse on its own, as the victim's server says in its own log:
//
//   - the victim's own password with the attacker's certificate, or with
//     a certificate for the victim's names from a CA of the rogue's own:
//     route TLS refuses it, with the operator's per-cluster CA;
//   - the victim's own certificate with no password or the attacker's:
//     the password refuses it;
//   - with route TLS off, no password or the attacker's: the password
//     refuses it.
//
// Careless variants it catches: one route password for every cluster (a
// constant, or one derived from the cluster's name, which the attacker
// shares): the attacker's password gets in; route TLS without verify, or
// a CA shared by every generated PKI: the victim's password with the
// attacker's certificate gets in (run: one CA made once for every
// cluster: "victims-password-attackers-certificate: the rogue server got
// in: nats-0 has a route to rogue"); no route authorization when TLS is on:
// the victim's certificate without a password gets in. Two clusters on
// one issuer's CA are no longer possible for routes: the API refuses
// spec.tls.routes.issuerRef, and the route CA is always the operator's
// own (NatsCluster.GeneratesRoutePKI; the envtest validation cases hold it).
func TestRoutesRefuseAnotherCluster(t *testing.T) {
	// All three form at once: forming is mostly waiting.
	clusters := formClustersNamedNats(t, map[string][]func(*v1alpha1.NatsClusterSpec){
		"own-ca":   nil,
		"tls-off":  {routeTLS(false)},
		"attacker": nil,
	})
	attacker := clusters["attacker"]
	stolen := stolenKit(t, attacker)
	own := clusters["own-ca"]
	type attempt struct {
		name    string
		kit     rogueKit
		refusal string
	}
	// One victim's attempts one after another (its log tells them apart
	// by time), the victims side by side, each with a rogue address of its
	// own: the waiting windows overlap.
	for _, victim := range []struct {
		name     string
		f        *formed
		rogueIP  string
		attempts []attempt
	}{
		{"own-ca", own, "127.1.0.7", []attempt{
			{"plain-no-password", rogueKit{}, refusedByTLS},
			{"victims-password-attackers-certificate", withPassword(stolen, routePassword(t, own)), refusedByTLS},
			{"victims-password-certificate-of-a-made-up-ca", withPassword(madeUpKit(t, own), routePassword(t, own)), refusedByTLS},
			{"victims-certificate-no-password", withPassword(leakedCertificate(t, own), ""), refusedByPassword},
			{"victims-certificate-attackers-password", withPassword(leakedCertificate(t, own), stolen.password), refusedByPassword},
		}},
		{"tls-off", clusters["tls-off"], "127.1.0.9", []attempt{
			{"no-password", rogueKit{}, refusedByPassword},
			{"attackers-password", rogueKit{password: stolen.password}, refusedByPassword},
		}},
	} {
		t.Run(victim.name, func(t *testing.T) {
			t.Parallel()
			for _, a := range victim.attempts {
				t.Run(a.name, func(t *testing.T) { refusedAlone(t, victim.f, victim.rogueIP, a.kit, a.refusal) })
			}
		})
	}
}

// refusedAlone starts a rogue with kit against f's first server and
// requires it kept out over a window, and refused by the layer under test
// as the server's own log says, for every attempt it made.
func refusedAlone(t *testing.T, f *formed, rogueIP string, kit rogueKit, refusal string) {
	t.Helper()
	before := len(cluster.ServerLog(f.NS, f.Pods[0]))
	rogue := startRogue(t, f, rogueIP, kit)
	for end := time.Now().Add(rogueWindow); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if err := noRoguePeer(f, rogue); err != nil {
			t.Fatalf("the rogue server got in: %v\nits log:\n%s", err, lastLines(rogue.log(), 20))
		}
	}
	since := cluster.ServerLog(f.NS, f.Pods[0])[before:]
	if n := strings.Count(since, refusal); n < 2 {
		t.Fatalf("%s's log has %d lines %q since the rogue started, want one per attempt:\n%s",
			f.Pods[0], n, refusal, lastLines(since, 20))
	}
	if !strings.Contains(rogue.log(), f.IP(f.Pods[0])) {
		t.Errorf("the rogue's log shows no route attempt to %s:\n%s", f.IP(f.Pods[0]), lastLines(rogue.log(), 20))
	}
}

func routeTLS(on bool) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) { s.TLS.Routes.Enabled = &on }
}

// formClustersNamedNats creates a NatsCluster "nats" in a new namespace
// per key, all at once, and waits for each to be Ready with its routes
// formed.
func formClustersNamedNats(t *testing.T, specs map[string][]func(*v1alpha1.NatsClusterSpec)) map[string]*formed {
	t.Helper()
	out := map[string]*formed{}
	for key, edits := range specs {
		ns := namespace(t)
		diagnoseOnFailure(t, ns)
		c := natsCluster(ns, "nats", edits...)
		if err := cluster.Client.Create(testCtx(t), c); err != nil {
			t.Fatal(err)
		}
		out[key] = &formed{NS: ns, Cluster: c, Pods: podNames(c.Name, 3)}
	}
	began := time.Now()
	for key, f := range out {
		waitClusterReady(t, f.Cluster, formTimeout)
		checkRoutes(t, f)
		t.Logf("%s (%s) Ready and routed %.1fs after creation", key, f.NS, time.Since(began).Seconds())
	}
	return out
}

// stolenKit is everything the attacker's own cluster hands it: its route
// password, and its route certificate, key and CA.
func stolenKit(t *testing.T, f *formed) rogueKit {
	t.Helper()
	tlsData := secretData(t, f.NS, f.Cluster.RouteTLSSecretName())
	return rogueKit{
		password: routePassword(t, f),
		cert:     string(tlsData[render.TLSCertKey]), key: string(tlsData[render.TLSKeyKey]), ca: string(tlsData[render.TLSCAKey]),
	}
}

// madeUpKit is a certificate for the victim's names from a CA of the
// rogue's own: only the CA gives it away.
func madeUpKit(t *testing.T, f *formed) rogueKit {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA("rogue CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := pki.Issue(ca, f.Cluster.RouteDNSNames(render.DefaultClusterDomain), now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return rogueKit{cert: leaf.Cert, key: leaf.Key, ca: ca.Cert}
}

// leakedCertificate is the victim's own route certificate, key and CA, as
// if they had leaked: what is left to keep the rogue out is the password.
func leakedCertificate(t *testing.T, f *formed) rogueKit {
	t.Helper()
	data := secretData(t, f.NS, f.Cluster.RouteTLSSecretName())
	return rogueKit{cert: string(data[render.TLSCertKey]), key: string(data[render.TLSKeyKey]), ca: string(data[render.TLSCAKey])}
}

func withPassword(k rogueKit, password string) rogueKit {
	k.password = password
	return k
}

// routePassword is the route password the operator made for f.
func routePassword(t *testing.T, f *formed) string {
	t.Helper()
	return string(secretData(t, f.NS, f.Cluster.RouteSecretName())[render.PasswordKey])
}

func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	var s corev1.Secret
	if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return s.Data
}
