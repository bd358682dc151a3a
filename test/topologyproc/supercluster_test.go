package topologyproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// member is a NatsCluster of the supercluster, referring to the other.
func member(name, ns, other, otherNS string) *v1alpha1.NatsCluster {
	return oneServer(name, ns, func(s *v1alpha1.NatsClusterSpec) {
		s.Gateway = &v1alpha1.GatewaySpec{
			Name:      name,
			SecretRef: v1alpha1.LocalSecretRef{Name: "gw"},
			TLS:       v1alpha1.GatewayTLSSpec{SecretName: "gw-tls"},
			Gateways:  []v1alpha1.GatewayRemote{{Name: other, ClusterRef: &v1alpha1.GatewayClusterRef{Name: other, Namespace: otherNS}}},
		}
	})
}

// tlsSecret is a certificate for names, from ca, as a user's Secret.
func tlsSecret(t *testing.T, ca pki.KeyPair, names []string) map[string]string {
	t.Helper()
	cert, err := pki.Issue(ca, names, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"tls.crt": cert.Cert, "tls.key": cert.Key, "ca.crt": ca.Cert}
}

// gatewayz reports the gateways a server has open both ways.
func gatewayz(p *proc) (outbound, inbound map[string]json.RawMessage, _ error) {
	body, err := p.monitor("/gatewayz")
	if err != nil {
		return nil, nil, err
	}
	var g struct {
		Outbound map[string]json.RawMessage `json:"outbound_gateways"`
		Inbound  map[string]json.RawMessage `json:"inbound_gateways"`
	}
	err = json.Unmarshal([]byte(body), &g)
	return g.Outbound, g.Inbound, err
}

// TestSuperclusterByReference: two NatsClusters in two namespaces, each
// naming the other by clusterRef, form a supercluster over mutual TLS
// (one CA) and the shared gateway credentials, dialing each other by the
// pod DNS names their certificates carry (each server resolves them
// through a hosts file, as in a pod). /gatewayz shows both ways, and a
// message crosses. Then two rogue gateways that call themselves west: one
// with a certificate of the right CA but no credentials, refused by
// east's own "authentication error" line; one with a CA of its own,
// refused at the TLS handshake; neither shows in east's /gatewayz.
//
// Careless variants run against it: the gateway authorization block left
// out (the first rogue joins: "no gateway authentication error"); the
// gateway tls block left out (the own-CA rogue is not refused at the
// handshake: "no gateway TLS handshake error"). verify off is no variant:
// nats-server requires and verifies client certificates on every gateway
// with TLS whatever verify says (getTLSConfig in server/opts.go).
func TestSuperclusterByReference(t *testing.T) {
	t.Parallel()
	east, west := member("east", "a", "west", "b"), member("west", "b", "east", "a")
	ca, err := pki.NewCA("supercluster CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	gw := map[string]string{"user": "gw", "password": "gwPassw0rd"}
	cred := credentials("")
	cred.Topology.GatewayUser, cred.Topology.GatewayPassword = gw["user"], gw["password"]

	eastIP, westIP := newIP(), newIP()
	hosts := fmt.Sprintf("%s east-0.east-headless.a.svc\n%s west-0.west-headless.b.svc\n", eastIP, westIP)
	eastPod := materialize(t, east, cred, map[string]map[string]string{
		"gw": gw, "gw-tls": tlsSecret(t, ca, east.GatewayDNSNames(render.DefaultClusterDomain)),
	}, t.TempDir(), eastIP)
	westPod := materialize(t, west, cred, map[string]map[string]string{
		"gw": gw, "gw-tls": tlsSecret(t, ca, west.GatewayDNSNames(render.DefaultClusterDomain)),
	}, t.TempDir(), westIP)
	eastProc, westProc := eastPod.runWithHosts(t, hosts), westPod.runWithHosts(t, hosts)

	for _, side := range []struct {
		p     *proc
		other string
	}{{eastProc, "west"}, {westProc, "east"}} {
		poll.Until(t, 20*time.Second, func() error {
			out, in, err := gatewayz(side.p)
			if err != nil || out[side.other] == nil || in[side.other] == nil {
				return fmt.Errorf("%s: outbound %v inbound %v (%v)", side.p.ip, keys(out), keys(in), err)
			}
			return nil
		})
	}
	appURL := func(p *proc) string {
		return fmt.Sprintf("nats://%s:%s@%s:4222", v1alpha1.DefaultAppUser, cred.Client, p.ip)
	}
	crosses(t, connect(t, appURL(eastProc)), connect(t, appURL(westProc)), "across")

	// A rogue with the supercluster's CA but no credentials.
	rogueIP := newIP()
	rogueDir := t.TempDir()
	good := tlsSecret(t, ca, []string{"rogue"})
	writeFiles(t, rogueDir, good)
	rogue := func(dir, ip string) string {
		return fmt.Sprintf(`gateway {
  name: west
  host: %q
  port: 7222
  tls { cert_file: %q, key_file: %q, ca_file: %q, insecure: true }
  gateways: [ { name: east, urls: ["nats://%s:7222"] } ]
}
`, ip, dir+"/tls.crt", dir+"/tls.key", dir+"/ca.crt", eastIP)
	}
	plain(t, rogueIP, rogue(rogueDir, rogueIP))
	noCredentials := regexp.MustCompile(`gid:\d+ - authentication error`)
	poll.Until(t, 15*time.Second, func() error {
		if !eastProc.logged(noCredentials) {
			return errors.New("east's log has no gateway authentication error")
		}
		return nil
	})

	// A rogue with a CA of its own.
	ownCA, err := pki.NewCA("rogue CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ownIP, ownDir := newIP(), t.TempDir()
	writeFiles(t, ownDir, tlsSecret(t, ownCA, []string{"rogue"}))
	plain(t, ownIP, rogue(ownDir, ownIP))
	foreignCA := regexp.MustCompile(`gid:\d+ - TLS gateway handshake error`)
	poll.Until(t, 15*time.Second, func() error {
		if !eastProc.logged(foreignCA) {
			return errors.New("east's log has no gateway TLS handshake error")
		}
		return nil
	})
	poll.Holds(t, 3*time.Second, func() error {
		_, in, err := gatewayz(eastProc)
		if err != nil {
			return err
		}
		if n := len(in["west"]); n == 0 {
			return errors.New("east lost the real west")
		}
		var conns []json.RawMessage
		if err := json.Unmarshal(in["west"], &conns); err != nil {
			return err
		}
		if len(conns) != 1 {
			return fmt.Errorf("east has %d inbound gateways named west: a rogue joined", len(conns))
		}
		return nil
	})
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
