package envtestown_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// dueAfter is how soon after issuance the tests' operator renews a route
// certificate: its renew-before is all of the certificate's life but this.
const dueAfter = 3 * time.Second

// TestRouteCertificateIsRenewedWhenDueByItself: with the route certificate
// due dueAfter after it was issued (--route-certificate-renew-before), the
// operator renews it by itself, more than once, from the same CA: no edit
// of the cluster or of a Secret (the test only reads). Each new certificate verifies for the servers' names and
// both ends of a route, and the CA stays.
//
// Careless operators it catches: one whose renewal ignores the time (it
// renews only for a change of names or CA; run as a temporary change of
// pki.Due: no second certificate within 30 s), one that ignores the
// option (two thirds of 90 days), and one that makes a new CA with each
// renewal. Not one that forgets to schedule a pass for the due time: a
// cluster whose servers do not answer (none run here) is looked at every
// second anyway, for its reload.
func TestRouteCertificateIsRenewedWhenDueByItself(t *testing.T) {
	ns := namespace(t, "renew")
	startOperator(t, manager.Options{RouteCertificateRenewBefore: pki.CertValidity - dueAfter}, ns)
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	caSecret, routeSecret := routeSecrets(t, c)
	ca, err := pki.ParseCert(string(caSecret.Data[render.TLSCertKey]))
	if err != nil || !ca.IsCA {
		t.Fatalf("%s holds no CA: %v", caSecret.Name, err)
	}
	// The test's own writes end here: from now on it reads.
	generation := c.Generation
	seen := []*x509.Certificate{routeCertificate(t, routeSecret, ca, ns)}
	for len(seen) < 3 {
		poll.Until(t, wait, func() error {
			if err := readSecret(routeSecret); err != nil {
				return err
			}
			if cert, err := pki.ParseCert(string(routeSecret.Data[render.TLSCertKey])); err != nil || cert.SerialNumber.Cmp(seen[len(seen)-1].SerialNumber) == 0 {
				return fmt.Errorf("route certificate %d of 3 not issued yet", len(seen)+1)
			}
			return nil
		})
		seen = append(seen, routeCertificate(t, routeSecret, ca, ns))
	}
	for i := 1; i < len(seen); i++ {
		if gap := seen[i].NotAfter.Sub(seen[i-1].NotAfter); gap < dueAfter-time.Second {
			t.Errorf("certificate %d came %s after the one before: renewed before it was due (%s)", i+1, gap, dueAfter)
		}
	}
	if err := readSecret(caSecret); err != nil {
		t.Fatal(err)
	}
	if again, _ := pki.ParseCert(string(caSecret.Data[render.TLSCertKey])); again == nil || !again.Equal(ca) {
		t.Error("renewing the route certificate replaced the CA")
	}
	var live v1alpha1.NatsCluster
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &live); err != nil {
		t.Fatal(err)
	}
	if live.Generation != generation {
		t.Errorf("the cluster's generation went from %d to %d: something edited its spec", generation, live.Generation)
	}
}

// routeSecrets waits for the route CA and route certificate Secrets the
// operator makes for c, and returns them as read.
func routeSecrets(t *testing.T, c *v1alpha1.NatsCluster) (ca, route *corev1.Secret) {
	t.Helper()
	ca = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.CASecretName()}}
	route = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.RouteTLSSecretName()}}
	poll.Until(t, wait, func() error {
		if err := readSecret(ca); err != nil {
			return err
		}
		return readSecret(route)
	})
	return ca, route
}

// readSecret reads s again from the API server.
func readSecret(s *corev1.Secret) error {
	return k8s.Get(context.Background(), client.ObjectKeyFromObject(s), s)
}

// routeCertificate verifies the route Secret's certificate against ca for
// the servers' names in every form and both ends of a route.
func routeCertificate(t *testing.T, s *corev1.Secret, ca *x509.Certificate, ns string) *x509.Certificate {
	t.Helper()
	cert, err := pki.ParseCert(string(s.Data[render.TLSCertKey]))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, host := range []string{"nats-0.nats-headless", "nats-2.nats-headless." + ns + ".svc.cluster.local"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("route certificate for %s: %v", host, err)
			}
		}
	}
	return cert
}
