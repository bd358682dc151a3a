package e2e_test

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/render"
)

// clusterCAName is the subject of the cluster's own route CA, as the
// operator keeps it in its CA Secret.
func clusterCAName(t *testing.T, f *formed) string {
	t.Helper()
	var s corev1.Secret
	if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: f.NS, Name: f.Cluster.CASecretName()}, &s); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(s.Data[render.TLSCertKey])
	if block == nil {
		t.Fatalf("the CA Secret %s has no %s", s.Name, render.TLSCertKey)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return ca.Subject.String()
}

// checkRoutePorts requires every server's route port to speak TLS with a
// certificate of the cluster's own CA (on), or plain NATS (off), as the
// port itself shows it.
func checkRoutePorts(t *testing.T, f *formed, on bool) {
	t.Helper()
	var ca string
	if on {
		ca = clusterCAName(t, f)
	}
	for _, pod := range f.Pods {
		if issuer := checkRoutePort(t, f, pod, on); issuer != ca {
			t.Fatalf("%s: route certificate issued by %q, want the cluster's CA %q", pod, issuer, ca)
		}
	}
}
