package e2ekit

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
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
