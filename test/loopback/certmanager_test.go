package loopback

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/poll"
)

// issueTimeout bounds one issuance by the real controllers; it takes about
// a second here (see the test log), the rest is room for a loaded machine.
const issueTimeout = time.Minute

// TestCertManagerIssuesAndRenews runs cert-manager's own controllers in a
// loopback cluster: a self-signed Issuer bootstraps a CA, a CA Issuer from
// that CA's Secret issues a leaf certificate, and the leaf is renewed, once
// on its own schedule (renewBefore close to duration: values cert-manager's
// webhook accepts, duration 1h and renewBefore 59m50s) and once by hand, as
// `cmctl renew` does. Every Secret is written by cert-manager.
func TestCertManagerIssuesAndRenews(t *testing.T) {
	t.Parallel()
	if err := runBuild(BuildCertManager); err != nil {
		t.Fatal(err)
	}
	c := Start(t, Options{CertManager: true})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cert-manager log:\n%s", tail(filepath.Join(c.Dir, "logs", "cert-manager.log"), 40))
		}
	})
	ctx := context.Background()
	const ns = "certs"
	must(t, c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))

	began := time.Now()
	apply(t, c.Client, ns, CAIssuerYAML("nats-ca", "nats-ca"))
	ca := readyCertificateSecret(t, c.Client, ns, "nats-ca", "")
	readyIssuer(t, c.Client, "Issuer", ns, "nats-ca-bootstrap")
	readyIssuer(t, c.Client, "Issuer", ns, "nats-ca")
	t.Logf("self-signed CA issued %s after creation", time.Since(began).Round(10*time.Millisecond))
	checkTestCA(t, ca)

	dnsNames := []string{"nats", "nats.certs", "nats.certs.svc", "nats.certs.svc.cluster.local", "*.nats-headless.certs.svc.cluster.local", "localhost"}
	began = time.Now()
	apply(t, c.Client, ns, `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: nats-auto}
spec:
  secretName: nats-auto-tls
  duration: 1h
  renewBefore: 59m50s
  dnsNames: [nats, nats.certs, nats.certs.svc, nats.certs.svc.cluster.local, "*.nats-headless.certs.svc.cluster.local", localhost]
  issuerRef: {name: nats-ca, kind: Issuer}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: nats-manual}
spec:
  secretName: nats-manual-tls
  duration: 1h
  dnsNames: [nats.certs.svc]
  issuerRef: {name: nats-ca, kind: Issuer}
`)
	auto := readyCertificateSecret(t, c.Client, ns, "nats-auto", "")
	t.Logf("leaf issued by the CA Issuer %s after creation", time.Since(began).Round(10*time.Millisecond))
	// The CA as cert-manager settled on it: a cert-manager just started
	// may issue a Certificate again when its Secret cache has not yet
	// seen the first Secret (a CI run saw nats-ca-2 50 ms after nats-ca-1
	// was Ready), and its CA Issuer signs with the Secret it holds.
	ca = readyCertificateSecret(t, c.Client, ns, "nats-ca", "")
	checkTestCA(t, ca)
	first := verifyLeaf(t, auto, ca.Data["tls.crt"], dnsNames)

	// Renewal on schedule: due 10s after the leaf's notBefore.
	renewed := readyCertificateSecret(t, c.Client, ns, "nats-auto", first.SerialNumber.String())
	second := verifyLeaf(t, renewed, ca.Data["tls.crt"], dnsNames)
	t.Logf("renewed on schedule %s after the first notBefore (due after 10s)", second.NotBefore.Sub(first.NotBefore))
	if !second.NotBefore.After(first.NotBefore) {
		t.Fatalf("renewal notBefore %s, not after the first %s", second.NotBefore, first.NotBefore)
	}

	// Renewal by hand, long before it is due: the Issuing condition, set
	// on the status as `cmctl renew` sets it.
	manual := readyCertificateSecret(t, c.Client, ns, "nats-manual", "")
	before := verifyLeaf(t, manual, ca.Data["tls.crt"], []string{"nats.certs.svc"})
	began = time.Now()
	must(t, TriggerRenewal(context.Background(), c.Client, ns, "nats-manual"))
	after := verifyLeaf(t, readyCertificateSecret(t, c.Client, ns, "nats-manual", before.SerialNumber.String()), ca.Data["tls.crt"], []string{"nats.certs.svc"})
	t.Logf("manual renewal served %s after the trigger (serial %x -> %x)", time.Since(began).Round(10*time.Millisecond), before.SerialNumber, after.SerialNumber)
}

// checkTestCA requires secret to hold the test's self-signed CA.
func checkTestCA(t *testing.T, secret *corev1.Secret) {
	t.Helper()
	c := parseCertificate(t, secret.Data["tls.crt"])
	if !c.IsCA || c.Subject.CommonName != "kubenats test CA" || c.CheckSignatureFrom(c) != nil {
		t.Fatalf("CA certificate: isCA %v, CN %q, self-signed: %v", c.IsCA, c.Subject.CommonName, c.CheckSignatureFrom(c))
	}
}

// TestCertManagerBesideEnvtest runs the same controllers against a bare
// envtest API server, with a self-signed ClusterIssuer.
func TestCertManagerBesideEnvtest(t *testing.T) {
	t.Parallel()
	if err := runBuild(BuildCertManager); err != nil {
		t.Fatal(err)
	}
	env := bareAPIServer(t)
	cfg := env.Config
	ctx := context.Background()
	cm, err := RunCertManager(ctx, env, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cert-manager log:\n%s", cm.Log())
		}
		cm.Stop()
	})
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, k8s, "default", `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: selfsigned}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: server}
spec:
  secretName: server-tls
  dnsNames: [server.default.svc]
  issuerRef: {name: selfsigned, kind: ClusterIssuer}
`)
	secret := readyCertificateSecret(t, k8s, "default", "server", "")
	leaf := parseCertificate(t, secret.Data["tls.crt"])
	selfSigned := leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature)
	if !slices.Equal(leaf.DNSNames, []string{"server.default.svc"}) || selfSigned != nil || leaf.IsCA {
		t.Fatalf("self-signed leaf: SANs %v, isCA %v, self-signed: %v", leaf.DNSNames, leaf.IsCA, selfSigned)
	}
	readyIssuer(t, k8s, "ClusterIssuer", "", "selfsigned")
}

// apply creates every object of a multi-document YAML in ns.
func apply(t *testing.T, k8s client.Client, ns, docs string) {
	t.Helper()
	must(t, CreateYAML(context.Background(), k8s, ns, docs))
}

// readyCertificateSecret waits until the Certificate is Ready and its
// Secret holds a certificate whose serial is not notSerial, and returns the
// Secret.
func readyCertificateSecret(t *testing.T, k8s client.Client, ns, name, notSerial string) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	poll.Until(t, issueTimeout, func() error {
		crt := &unstructured.Unstructured{}
		crt.SetAPIVersion("cert-manager.io/v1")
		crt.SetKind("Certificate")
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, crt); err != nil {
			return err
		}
		if status := conditionStatus(crt, "Ready"); status != "True" {
			return fmt.Errorf("certificate %s Ready=%q", name, status)
		}
		secretName, _, _ := unstructured.NestedString(crt.Object, "spec", "secretName")
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: secretName}, secret); err != nil {
			return err
		}
		block, _ := pem.Decode(secret.Data["tls.crt"])
		if block == nil {
			return fmt.Errorf("secret %s: no certificate in tls.crt", secretName)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return err
		}
		if cert.SerialNumber.String() == notSerial {
			return fmt.Errorf("secret %s still holds serial %s", secretName, notSerial)
		}
		return nil
	})
	return secret
}

// readyIssuer waits until the issuers controllers set the Issuer (or
// ClusterIssuer) Ready: a certificate may be signed before that, and a
// binary without the issuer type registered never gets there.
func readyIssuer(t *testing.T, k8s client.Client, kind, ns, name string) {
	t.Helper()
	poll.Until(t, issueTimeout, func() error {
		issuer := &unstructured.Unstructured{}
		issuer.SetAPIVersion("cert-manager.io/v1")
		issuer.SetKind(kind)
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, issuer); err != nil {
			return err
		}
		if status := conditionStatus(issuer, "Ready"); status != "True" {
			return fmt.Errorf("%s %s Ready=%q", kind, name, status)
		}
		return nil
	})
}

func conditionStatus(obj *unstructured.Unstructured, condition string) string {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == condition {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// verifyLeaf checks a Secret cert-manager wrote for a leaf: tls.key matches
// tls.crt, ca.crt is the CA, the chain verifies against it for a TLS
// server, and the SANs are exactly dnsNames. It returns the leaf.
func verifyLeaf(t *testing.T, secret *corev1.Secret, caPEM []byte, dnsNames []string) *x509.Certificate {
	t.Helper()
	for _, key := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if len(secret.Data[key]) == 0 {
			t.Fatalf("secret %s has no %s", secret.Name, key)
		}
	}
	if string(secret.Data["ca.crt"]) != string(caPEM) {
		t.Fatalf("secret %s: ca.crt is not the bootstrapped CA", secret.Name)
	}
	if _, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"]); err != nil {
		t.Fatalf("secret %s: key does not match certificate: %v", secret.Name, err)
	}
	chain := parseCertificates(t, secret.Data["tls.crt"])
	roots, intermediates := x509.NewCertPool(), x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		t.Fatalf("secret %s: ca.crt holds no certificate", secret.Name)
	}
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	leaf := chain[0]
	for _, name := range dnsNames {
		host := name
		if host[0] == '*' {
			host = "nats-0" + host[1:]
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: intermediates,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Fatalf("secret %s: chain does not verify for %s: %v", secret.Name, host, err)
		}
	}
	if !slices.Equal(leaf.DNSNames, dnsNames) || len(leaf.IPAddresses) != 0 {
		t.Fatalf("secret %s: SANs %v and IPs %v, want exactly %v", secret.Name, leaf.DNSNames, leaf.IPAddresses, dnsNames)
	}
	return leaf
}

func parseCertificate(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	return parseCertificates(t, data)[0]
}

func parseCertificates(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatal("no PEM certificate")
	}
	return out
}
