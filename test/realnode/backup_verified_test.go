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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
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

	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backups"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-verified"},
		Spec: v1alpha1.BackupSpec{Cluster: c.Name, Stream: "ORDERS", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: claim.Name}}}
	for _, o := range []client.Object{claim, b} {
		if err := node.Client.Create(ctxOf(t), o); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, 3*time.Minute, func() error {
		if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if b.Status.Phase == v1alpha1.BackupFailed {
			t.Fatalf("the backup failed: %+v", b.Status.Conditions)
		}
		if b.Status.Phase != v1alpha1.BackupSucceeded {
			return fmt.Errorf("Backup %s: phase %q, %+v", b.Name, b.Status.Phase, b.Status.Conditions)
		}
		return nil
	})
	if b.Status.Messages != total || b.Status.LastSequence != total {
		t.Fatalf("the backup holds %d messages up to %d, want %d", b.Status.Messages, b.Status.LastSequence, total)
	}
}
