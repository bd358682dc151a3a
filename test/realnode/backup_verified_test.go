package realnode_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestBackupOfAClusterThatVerifiesClients: a cluster whose client port
// requires a certificate of the user's CA (spec.tls.client.verify, from
// an opted-in Secret) is backed up by a Job that presents the client
// listener's certificate, as the operator does.
// Careless variant watched failing: the Job without a client certificate
// (the Backup failed, ServerUnreachable: "connection closed by remote
// after TLS handshake").
func TestBackupOfAClusterThatVerifiesClients(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	now := time.Now().Add(-time.Minute)
	ca, err := pki.NewCA("clients CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ref := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "verified"}}
	names := []string{ref.InternalHost(), ref.ClientServiceName() + "." + ns + ".svc.cluster.local", "*." + ref.HeadlessServiceName() + "." + ns + ".svc"}
	served, err := pki.Issue(ca, names, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Client.Create(ctxOf(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "verified-tls", Labels: map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}},
		Type:       corev1.SecretTypeTLS,
		StringData: map[string]string{"tls.crt": served.Cert, "tls.key": served.Key, "ca.crt": ca.Cert},
	}); err != nil {
		t.Fatal(err)
	}
	c := formCluster(t, ns, ref.Name, func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "verified-tls", Verify: true}
	})

	app, err := pki.Issue(ca, []string{"an-app"}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair([]byte(app.Cert), []byte(app.Key))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(ca.Cert))
	js := e2ekit.AppJetStream(t, clientConn(t, c, nats.Secure(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})))
	const total = 20
	createStream(t, js, natsjs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	for i := 1; i <= total; i++ {
		if _, err := js.Publish(ctxOf(t), "orders.new", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}

	b := takeBackup(t, ns, "orders-verified", v1alpha1.BackupSpec{Cluster: c.Name, Stream: "ORDERS"})
	if b.Status.Messages != total || b.Status.LastSequence != total {
		t.Fatalf("the backup holds %d messages up to %d, want %d", b.Status.Messages, b.Status.LastSequence, total)
	}
}
