package e2ekit

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Credentials reads the NatsCluster's credentials Secret, as a user would.
func Credentials(t *testing.T, f *Formed) map[string]string {
	t.Helper()
	ref := f.Cluster.Status.CredentialsSecretRef
	if ref == nil || ref.Name != f.Cluster.Name+"-client" {
		t.Fatalf("status.credentialsSecretRef = %+v, want %s-client", ref, f.Cluster.Name)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: ref.Name}}
	Get(t, s)
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// Connect opens a client connection that fails at once instead of
// retrying, so that a refusal is the error it returns.
func Connect(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, error) {
	t.Helper()
	opts = append([]nats.Option{nats.NoReconnect(), nats.Timeout(5 * time.Second)}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err == nil {
		t.Cleanup(nc.Close)
	}
	return nc, err
}

// AppConn connects to the given servers of f the way an application in
// the cluster would, with the credentials of the <name>-client Secret (user
// and password, or the token), but at the pods' DNS names: the client
// Service would pick one server for us, and these scenarios want to say
// which.
func AppConn(t *testing.T, f *Formed, name string, pods ...string) *nats.Conn {
	t.Helper()
	cred := Credentials(t, f)
	opts := []nats.Option{nats.Name(name), ClusterDNS(), ClusterTLS(t, cred)}
	if cred["token"] != "" {
		opts = append(opts, nats.Token(cred["token"]))
	} else {
		opts = append(opts, nats.UserInfo(cred["user"], cred["password"]))
	}
	nc, err := Connect(t, PodURLs(f, pods), opts...)
	if err != nil {
		t.Fatalf("connecting to %v with the credentials Secret: %v", pods, err)
	}
	return nc
}

// ClusterTLS trusts what the credentials Secret cred says clients trust
// (ca.crt), as an application would; nats.go then verifies each server
// under the DNS name it dials.
func ClusterTLS(t *testing.T, cred map[string]string) nats.Option {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(cred["ca.crt"])) {
		t.Fatal("the credentials Secret has no usable ca.crt")
	}
	return nats.Secure(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
}

// AddrTLS is TLS for a client of f that dials a server at its pod's
// address: it trusts the credentials Secret's ca.crt and verifies the
// server under the DNS name of f's first server, which every server's
// certificate carries (a wildcard over the headless Service). Such a
// client knows it reached one of f's servers, not which.
func AddrTLS(t *testing.T, f *Formed) nats.Option {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(Credentials(t, f)["ca.crt"])) {
		t.Fatal("the credentials Secret has no usable ca.crt")
	}
	return nats.Secure(&tls.Config{RootCAs: roots, ServerName: f.Cluster.PodDNSName(f.Pods[0]), MinVersion: tls.VersionTLS12})
}

// AppJetStream is the JetStream API of an application connection.
func AppJetStream(t *testing.T, nc *nats.Conn) natsjs.JetStream {
	t.Helper()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// PodURLs names the servers of pods by their DNS names, which follow a
// replaced pod to its new address (clusterDNS resolves them); a pod's IP
// dies with the pod.
func PodURLs(f *Formed, pods []string) string {
	urls := make([]string, len(pods))
	for i, p := range pods {
		urls[i] = "tls://" + net.JoinHostPort(f.Cluster.PodDNSName(p), "4222")
	}
	return strings.Join(urls, ",")
}

// ClusterDNS lets a client of the test process dial cluster DNS names.
func ClusterDNS() nats.Option {
	return nats.SetCustomDialer(jetstream.DialerFunc(Cluster.Dial))
}
