package e2etopology_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// member is a NatsCluster of servers servers in the supercluster, naming
// the other (of as many servers) by reference.
func member(name, otherName, otherNS string, servers int32) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) {
		// A single server runs no JetStream in a supercluster (refused at
		// admission: nats-server requires routes for it).
		s.Replicas, s.JetStream.Enabled = ptr.To(servers), ptr.To(servers > 1)
		s.Gateway = &v1alpha1.GatewaySpec{
			Name: name, SecretRef: v1alpha1.LocalSecretRef{Name: "gw"},
			TLS: v1alpha1.GatewayTLSSpec{SecretName: "gw-tls"},
			Gateways: []v1alpha1.GatewayRemote{{Name: otherName,
				ClusterRef: &v1alpha1.GatewayClusterRef{Name: otherName, Namespace: otherNS, Replicas: servers}}},
		}
	}
}

// superclusterSecrets writes, in each of the members' namespaces, the
// gateway credentials (Secret gw) and a certificate of ca for the
// member's gateway names (Secret gw-tls).
func superclusterSecrets(t *testing.T, ca pki.KeyPair, members map[string]string) {
	t.Helper()
	gw := map[string]string{"user": "gw", "password": "gwPassw0rd"}
	for name, ns := range members {
		userSecret(t, ns, "gw", gw)
		ref := &v1alpha1.NatsCluster{}
		ref.Name, ref.Namespace = name, ns
		userSecret(t, ns, "gw-tls", issue(t, ca, ref.GatewayDNSNames(render.DefaultClusterDomain)))
	}
}

func issue(t *testing.T, ca pki.KeyPair, names []string) map[string]string {
	t.Helper()
	cert, err := pki.Issue(ca, names, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"tls.crt": cert.Cert, "tls.key": cert.Key, "ca.crt": ca.Cert}
}

// TestSupercluster: two NatsClusters in two namespaces, each naming the
// other by clusterRef, form a supercluster (each server's /gatewayz shows
// the other both ways) over mutual TLS from one CA and the gateway
// credentials of an opted-in Secret in each namespace; a message crosses
// the gateway. A rogue gateway that calls itself west is kept out, each
// layer alone, the other given away as if leaked: with a certificate of
// the right CA and no credentials, or the right user with another
// password (the gateway authorization refuses it); with the right
// credentials and a certificate of a CA of its own (TLS refuses it).
// Kept out means, over a window of many of its attempts: neither side's
// /gatewayz shows the rogue's gateway, and east's own log gives the
// layer's refusal for its attempts.
//
// Careless variant run: the gateway authorization left out of nats.conf
// (the rogues with the right CA join: "the rogue has its gateway to
// east"). The gateway TLS rendered without verify is no variant:
// nats-server forces verified client certificates on gateways whatever
// the block says, and the rogue of a CA of its own was refused as before;
// that case holds the layer against a change of the server.
func TestSupercluster(t *testing.T) {
	t.Parallel()
	nsEast, nsWest := e2ekit.Namespace(t), e2ekit.Namespace(t)
	ca, err := pki.NewCA("supercluster CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	superclusterSecrets(t, ca, map[string]string{"east": nsEast, "west": nsWest})
	// West forms first: a server is ready while its gateways still retry.
	west := e2ekit.FormClusterIn(t, nsWest, "west", member("west", "east", nsEast, 1))
	east := e2ekit.FormClusterIn(t, nsEast, "east", member("east", "west", nsWest, 1))
	joined(t, east, "west")
	joined(t, west, "east")
	crosses(t, e2ekit.AppConn(t, east, "east-app", east.Pods[0]), e2ekit.AppConn(t, west, "west-app", west.Pods[0]), "across")

	rogueCA, err := pki.NewCA("rogue CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	byPassword := regexp.MustCompile(`gid:\d+ - authentication error`)
	byTLS := regexp.MustCompile(`gid:\d+ - TLS gateway handshake error`)
	for _, rogue := range []struct {
		name, credentials string
		ca                pki.KeyPair
		refusal           *regexp.Regexp
	}{
		{"right CA, no credentials", "", ca, byPassword},
		{"right CA, the user with another password", "gw:notThePassw0rd@", ca, byPassword},
		{"leaked credentials, a CA of its own", "gw:gwPassw0rd@", rogueCA, byTLS},
	} {
		t.Run(rogue.name, func(t *testing.T) { rogueGatewayKeptOut(t, east, rogue.credentials, rogue.ca, rogue.refusal) })
	}
}

// rogueWindow is how long a rogue gateway is watched for: many of its
// reconnect attempts.
const rogueWindow = 10 * time.Second

// rogueGatewayKeptOut starts a nats-server outside that calls itself west
// and dials east's first server's gateway with credentials ("user:pass@"
// or "") and a certificate of ca, and requires it kept out over
// rogueWindow, east's log giving refusal for its attempts.
func rogueGatewayKeptOut(t *testing.T, east *e2ekit.Formed, credentials string, ca pki.KeyPair, refusal *regexp.Regexp) {
	dir := t.TempDir()
	for k, v := range issue(t, ca, []string{"rogue"}) {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := len(e2ekit.Cluster.ServerLog(east.NS, east.Pods[0]))
	rogue := startOutside(t, fmt.Sprintf(`gateway {
  name: west
  host: $HOST
  port: 7222
  tls { cert_file: %q, key_file: %q, ca_file: %q, insecure: true }
  gateways: [ { name: east, urls: ["nats://%s%s:7222"] } ]
}
`, dir+"/tls.crt", dir+"/tls.key", dir+"/ca.crt", credentials, east.IP(east.Pods[0])))
	// The rogue lists each attempt as an outbound connection from its
	// CONNECT until east's refusal arrives a moment later; a connection it
	// still holds at the next look, by the same id, is one east let in.
	lastAttempt := uint64(0)
	for end := time.Now().Add(rogueWindow); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if body, err := rogue.get("/gatewayz"); err == nil {
			cid := outboundConnection(body, "east")
			if cid != 0 && cid == lastAttempt {
				t.Fatalf("the rogue holds its gateway to east (connection %d, seen twice 250 ms apart): %s", cid, body)
			}
			lastAttempt = cid
		}
		for _, pod := range east.Pods {
			_, in, err := gatewayz(east, pod)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(in["west"]), rogue.ip) {
				t.Fatalf("%s has an inbound gateway from the rogue at %s: %s", pod, rogue.ip, in["west"])
			}
		}
	}
	since := e2ekit.Cluster.ServerLog(east.NS, east.Pods[0])[before:]
	if n := len(refusal.FindAllString(since, -1)); n < 2 {
		t.Fatalf("%s's log has %d lines %q since the rogue started, want one per attempt:\n%s", east.Pods[0], n, refusal, e2ekit.LastLines(since, 20))
	}
}

// outboundConnection is the id of the outbound gateway connection to name
// a /gatewayz body lists, 0 when there is none.
func outboundConnection(body, name string) uint64 {
	var g struct {
		Outbound map[string]struct {
			Connection *struct {
				CID uint64 `json:"cid"`
			} `json:"connection"`
		} `json:"outbound_gateways"`
	}
	if json.Unmarshal([]byte(body), &g) != nil {
		return 0
	}
	if gw, ok := g.Outbound[name]; ok && gw.Connection != nil {
		return gw.Connection.CID
	}
	return 0
}

// gatewayz is the outbound and inbound gateways of f's server pod.
func gatewayz(f *e2ekit.Formed, pod string) (out, in map[string]json.RawMessage, _ error) {
	resp, err := http.Get("http://" + f.IP(pod) + ":8222/gatewayz")
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	var g struct {
		Out map[string]json.RawMessage `json:"outbound_gateways"`
		In  map[string]json.RawMessage `json:"inbound_gateways"`
	}
	err = json.Unmarshal(body, &g)
	return g.Out, g.In, err
}

// joined waits until every server of f has its outbound gateway to other
// and some server of f has an inbound one from other. Each server dials
// one server of the other member, picked at random, so a given server
// need not have an inbound gateway at all.
func joined(t *testing.T, f *e2ekit.Formed, other string) {
	t.Helper()
	e2ekit.Eventually(t, time.Minute, func() error {
		inbound := false
		for _, pod := range f.Pods {
			out, in, err := gatewayz(f, pod)
			if err != nil || out[other] == nil {
				return fmt.Errorf("%s: no outbound gateway to %s (%v)", pod, other, err)
			}
			inbound = inbound || in[other] != nil
		}
		if !inbound {
			return fmt.Errorf("%s: no inbound gateway from %s on any server", f.Cluster.Name, other)
		}
		return nil
	})
}
