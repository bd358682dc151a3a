package pki

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	names := []string{"*.nats-headless", "*.nats-headless.ns"}
	ca := mustCA(t, now, CAValidity)
	otherCA := mustCA(t, now, CAValidity)
	fresh := mustIssue(t, ca, names, now, CertValidity)
	for _, tc := range []struct {
		name   string
		cert   KeyPair
		ca     KeyPair
		at     time.Time
		want   Action
		reason string
		// renewBefore is the operator's option; zero for the default.
		renewBefore time.Duration
	}{
		{"nothing yet: a CA first", KeyPair{}, KeyPair{}, now, ReplaceCA, "no CA", 0},
		{"a CA without its key is no CA", fresh, KeyPair{Cert: ca.Cert}, now, ReplaceCA, "no CA", 0},
		{"garbage CA", fresh, KeyPair{Cert: "junk", Key: "junk"}, now, ReplaceCA, "cannot be read", 0},
		{"a leaf is no CA", fresh, fresh, now, ReplaceCA, "cannot be read", 0},
		{"CA about to expire", fresh, mustCA(t, now, CertValidity/2), now, ReplaceCA, "expires", 0},
		{"CA but no certificate", KeyPair{}, ca, now, Renew, "no certificate", 0},
		{"fresh certificate is kept", fresh, ca, now, Keep, "", 0},
		{"kept until two thirds of its life", fresh, ca, now.Add(CertValidity * 2 / 3).Add(-2 * time.Minute), Keep, "", 0},
		{"renewed after two thirds of its life", fresh, ca, now.Add(CertValidity * 2 / 3), Renew, "due for renewal", 0},
		{"signed by another CA", mustIssue(t, otherCA, names, now, CertValidity), ca, now, Renew, "not signed", 0},
		{"names changed", mustIssue(t, ca, names[:1], now, CertValidity), ca, now, Renew, "names changed", 0},
		{"names in another order are the same", mustIssue(t, ca, []string{names[1], names[0]}, now, CertValidity), ca, now, Keep, "", 0},
		{"unreadable certificate", KeyPair{Cert: "junk", Key: "junk"}, ca, now, Renew, "cannot be read", 0},
		// A renew-before of all but 5 s: due 5 s after issuance, not before.
		{"with renew-before, kept until then", fresh, ca, now.Add(4 * time.Second), Keep, "", CertValidity - 5*time.Second},
		{"with renew-before, renewed then", fresh, ca, now.Add(5 * time.Second), Renew, "due for renewal", CertValidity - 5*time.Second},
		{"with a short renew-before, kept past two thirds", fresh, ca, now.Add(CertValidity * 2 / 3), Keep, "", time.Hour},
		{"with a short renew-before, renewed within it", fresh, ca, now.Add(CertValidity - time.Hour), Renew, "due for renewal", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Due(tc.cert, tc.ca, names, tc.at, tc.renewBefore)
			if got.Action != tc.want {
				t.Fatalf("Due = %+v, want action %d", got, tc.want)
			}
			if tc.reason != "" && !contains(got.Why, tc.reason) {
				t.Errorf("why = %q, want it to mention %q", got.Why, tc.reason)
			}
		})
	}
}

func TestIssuedCertificateVerifiesForEveryName(t *testing.T) {
	_, _, cert, roots := issuedFor(t, "*.nats-headless", "*.nats-headless.ns.svc")
	if len(cert.IPAddresses) != 0 {
		t.Errorf("IP SANs %v: route certificates carry names only", cert.IPAddresses)
	}
	for _, host := range []string{"nats-0.nats-headless", "nats-12.nats-headless.ns.svc"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("%s for usage %d: %v", host, usage, err)
			}
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "nats-0.other-headless", Roots: roots}); err == nil {
		t.Error("the certificate verifies for another cluster's server")
	}
}

// issuedFor is a CA, a certificate it issued now for names, that
// certificate parsed, and a pool trusting the CA.
func issuedFor(t *testing.T, names ...string) (ca, leaf KeyPair, cert *x509.Certificate, roots *x509.CertPool) {
	t.Helper()
	now := time.Now()
	ca = mustCA(t, now, CAValidity)
	leaf = mustIssue(t, ca, names, now, CertValidity)
	caCert, err := ParseCert(ca.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = ParseCert(leaf.Cert); err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(caCert)
	return ca, leaf, cert, roots
}

func mustCA(t *testing.T, now time.Time, validity time.Duration) KeyPair {
	t.Helper()
	ca, err := NewCA("test CA", now, validity)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func mustIssue(t *testing.T, ca KeyPair, names []string, now time.Time, validity time.Duration) KeyPair {
	t.Helper()
	kp, err := Issue(ca, names, now, validity)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestCheckRenewBefore(t *testing.T) {
	for d, ok := range map[time.Duration]bool{0: true, time.Hour: true, CertValidity - time.Second: true, CertValidity: false, -time.Second: false} {
		if err := CheckRenewBefore(d); (err == nil) != ok {
			t.Errorf("CheckRenewBefore(%s) = %v, want ok %v", d, err, ok)
		}
	}
}

// TestAnAddressNameIsAnIPAddress: a certificate for 127.0.0.1 (the test
// control plane dials the operator's webhook there) verifies for that
// address, and Due takes it as the same names. Careless variant: the
// address written as a DNS name verifies for nothing a client dials.
func TestAnAddressNameIsAnIPAddress(t *testing.T) {
	names := []string{"kubenats-webhook.kubenats-system.svc", "127.0.0.1"}
	ca, leaf, cert, roots := issuedFor(t, names...)
	now := time.Now()
	if err := cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("127.0.0.1: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "kubenats-webhook.kubenats-system.svc", Roots: roots}); err != nil {
		t.Error(err)
	}
	if d := Due(leaf, ca, names, now, 0); d.Action != Keep {
		t.Errorf("Due = %+v for the names it was issued with", d)
	}
	if d := Due(leaf, ca, names[:1], now, 0); d.Action != Renew {
		t.Errorf("Due = %+v with the address dropped", d)
	}
}
