package e2etopology_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// TestLeafnodesOverMutualTLS: a NatsCluster accepting leafnodes with
// accept.tls from an opted-in Secret and verify: true. An edge server
// whose client certificate the Secret's ca.crt signed joins (with the
// generated leafnode password) and messages cross; one with a
// certificate of a foreign CA and the right password is refused by the
// cluster's server (its log names the TLS handshake error) and never
// shows a leafnode connection over several seconds. The edge servers do
// not check the cluster's certificate (insecure: its names are the
// Service's, and they dial the pod's address): what is under test is the
// cluster's side. Careless variants: verify left out of the leafnodes tls
// block (the foreign certificate joins), and ca.crt not mounted (the
// trusted edge is refused as well).
func TestLeafnodesOverMutualTLS(t *testing.T) {
	t.Parallel()
	ns := e2ekit.Namespace(t)
	now := time.Now().Add(-time.Minute)
	ca, err := pki.NewCA("edge-leafnodes-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := pki.Issue(ca, []string{"edge"}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	userSecret(t, ns, "edge-leaf-tls", map[string]string{
		render.TLSCertKey: listener.Cert, render.TLSKeyKey: listener.Key, render.TLSCAKey: ca.Cert})
	f := e2ekit.FormClusterIn(t, ns, "edge", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{
			TLS: &v1alpha1.ClientTLSSpec{SecretName: "edge-leaf-tls", Verify: true}}}
	})
	pod := f.Pods[0]
	auth := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.Cluster.LeafnodeAuthSecretName()}}
	e2ekit.Get(t, auth)
	url := fmt.Sprintf("nats-leaf://leaf:%s@%s:7422", auth.Data[render.PasswordKey], f.IP(pod))

	trusted := edgeWithCertificate(t, url, ca, "site-a")
	wantLeafs(t, trusted, 1)
	app := e2ekit.AppConn(t, f, "app", pod)
	edgeClient, err := e2ekit.Connect(t, "nats://"+trusted.ip+":4222")
	if err != nil {
		t.Fatal(err)
	}
	crosses(t, edgeClient, app, "up.tls")
	crosses(t, app, edgeClient, "down.tls")

	foreignCA, err := pki.NewCA("someone-elses-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	foreign := edgeWithCertificate(t, url, foreignCA, "site-b")
	handshake := regexp.MustCompile(`lid:\d+ - TLS leafnode handshake error`)
	e2ekit.Eventually(t, time.Minute, func() error {
		if !handshake.MatchString(e2ekit.Cluster.ServerLog(ns, pod)) {
			return errors.New("the server's log has no leafnode TLS handshake error")
		}
		return nil
	})
	poll.Holds(t, 5*time.Second, func() error {
		if n := foreign.leafs(); n != 0 {
			return fmt.Errorf("the edge with a foreign CA's certificate lists %d leafnode connections", n)
		}
		return nil
	})
}

// edgeWithCertificate starts an edge nats-server that dials url as a
// leafnode, presenting a client certificate ca signs for name.
func edgeWithCertificate(t *testing.T, url string, ca pki.KeyPair, name string) *outside {
	t.Helper()
	pair, err := pki.Issue(ca, []string{name}, time.Now().Add(-time.Minute), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, []byte(pair.Cert), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte(pair.Key), 0o600); err != nil {
		t.Fatal(err)
	}
	return startOutside(t, fmt.Sprintf("leafnodes { remotes: [ { url: %q, tls: { cert_file: %q, key_file: %q, insecure: true } } ] }\n", url, cert, key))
}
