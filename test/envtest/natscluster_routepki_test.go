package envtest_test

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// TestRoutePKIIsMadeOnceAndRenewedWhenDue: a new cluster gets a CA and a
// route certificate for every form of its servers' names, signed by that
// CA, good for both ends of a route; a later pass keeps both (the pass
// that saw a spec change, known by its observedGeneration: a careless
// operator that issues a certificate in every pass fails, run as a
// temporary change of pki.Due); a route
// certificate past two thirds of its life is replaced by a new one from the
// same CA (the servers reload it), and the CA stays. That a certificate
// falling due is renewed with nobody's help is
// TestRouteCertificateIsRenewedWhenDueByItself (test/envtestown), with an
// operator of its own whose certificates fall due in seconds.
func TestRoutePKIIsMadeOnceAndRenewedWhenDue(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-ca"}}
	routeSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-routes-tls"}}
	get(t, caSecret)
	get(t, routeSecret)
	ca, err := pki.ParseCert(string(caSecret.Data[render.TLSCertKey]))
	if err != nil || !ca.IsCA {
		t.Fatalf("nats-ca holds no CA: %v", err)
	}
	first := checkRouteCertificate(t, routeSecret, ca, ns)

	// Another pass (a spec change) keeps them: once the status says the
	// pass that saw the change is done, the certificate is the first one.
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.Auth.User = "app" })
	waitObserved(t, c)
	get(t, routeSecret)
	if got, _ := pki.ParseCert(string(routeSecret.Data[render.TLSCertKey])); got == nil || got.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatal("the route certificate was replaced though it was not due")
	}

	// A certificate past two thirds of its life: the operator renews it.
	caPair := pki.KeyPair{Cert: string(caSecret.Data[render.TLSCertKey]), Key: string(caSecret.Data[render.TLSKeyKey])}
	old, err := pki.Issue(caPair, c.RouteDNSNames(render.DefaultClusterDomain), time.Now().Add(-70*time.Minute), 90*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	oldCert, _ := pki.ParseCert(old.Cert)
	routeSecret.Data[render.TLSCertKey], routeSecret.Data[render.TLSKeyKey] = []byte(old.Cert), []byte(old.Key)
	if err := k8s.Update(ctx(t), routeSecret); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(routeSecret), routeSecret); err != nil {
			return err
		}
		got, err := pki.ParseCert(string(routeSecret.Data[render.TLSCertKey]))
		if err != nil || got.SerialNumber.Cmp(oldCert.SerialNumber) == 0 {
			return fmt.Errorf("the due route certificate is still there")
		}
		return nil
	})
	checkRouteCertificate(t, routeSecret, ca, ns)
	get(t, caSecret)
	if again, _ := pki.ParseCert(string(caSecret.Data[render.TLSCertKey])); again == nil || !again.Equal(ca) {
		t.Error("renewing the route certificate replaced the CA")
	}
}

// checkRouteCertificate verifies the route Secret against the CA for every
// name form and both usages, and returns its certificate.
func checkRouteCertificate(t *testing.T, s *corev1.Secret, ca *x509.Certificate, ns string) *x509.Certificate {
	t.Helper()
	cert, err := pki.ParseCert(string(s.Data[render.TLSCertKey]))
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data[render.TLSCAKey]) == "" || len(s.Data[render.TLSKeyKey]) == 0 {
		t.Fatal("the route Secret lacks ca.crt or tls.key")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, host := range []string{"nats-0.nats-headless", "nats-1.nats-headless." + ns, "nats-2.nats-headless." + ns + ".svc", "nats-7.nats-headless." + ns + ".svc.cluster.local"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("route certificate for %s: %v", host, err)
			}
		}
	}
	if len(cert.IPAddresses) != 0 || slices.Contains(cert.DNSNames, "localhost") {
		t.Errorf("route certificate carries IPs %v or localhost: %v", cert.IPAddresses, cert.DNSNames)
	}
	return cert
}

// TestClientCertificateSecretMustBeOptedIn: a client certificate Secret of
// the user's is used only once its owner labelled it for kubenats; until
// then CertificatesReady and Ready say so, naming the label, and the
// credentials Secret carries no CA. Labelled, it is taken up without a
// spec change, its CA handed to clients.
func TestClientCertificateSecretMustBeOptedIn(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	now := time.Now()
	ca, err := pki.NewCA("client CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := pki.Issue(ca, []string{"nats." + ns + ".svc"}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "my-tls"}, Type: corev1.SecretTypeTLS,
		StringData: map[string]string{"tls.crt": leaf.Cert, "tls.key": leaf.Key, "ca.crt": ca.Cert}}
	create(t, secret)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "my-tls"} })
	create(t, c)
	// Refused, the Secret stops the apply (TestRefusedTLSSecretIsNeverMounted):
	// Ready says so as for any refused Secret, CertificatesReady names the
	// certificate.
	c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
	if ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(ready.Message, v1alpha1.SecretAllowLabel) {
		t.Errorf("Ready message %q does not say how to opt the Secret in", ready.Message)
	}
	if certs := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionCertificatesReady); certs == nil || certs.Reason != v1alpha1.ReasonCertificateInvalid {
		t.Errorf("CertificatesReady %+v, want reason %s", certs, v1alpha1.ReasonCertificateInvalid)
	}
	update(t, secret, func(s *corev1.Secret) {
		s.Labels = map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}
	})
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionCertificatesReady) {
			return fmt.Errorf("CertificatesReady %+v", meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionCertificatesReady))
		}
		creds := &corev1.Secret{}
		if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats-client"}, creds); err != nil {
			return err
		}
		if string(creds.Data[render.TLSCAKey]) != ca.Cert || !strings.HasPrefix(string(creds.Data[render.CredentialsURLKey]), "tls://") {
			return fmt.Errorf("credentials Secret: ca.crt %d bytes, url scheme %.6s", len(creds.Data[render.TLSCAKey]), creds.Data[render.CredentialsURLKey])
		}
		return nil
	})
}
