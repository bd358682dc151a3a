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
	}{
		{"nothing yet: a CA first", KeyPair{}, KeyPair{}, now, ReplaceCA, "no route CA"},
		{"a CA without its key is no CA", fresh, KeyPair{Cert: ca.Cert}, now, ReplaceCA, "no route CA"},
		{"garbage CA", fresh, KeyPair{Cert: "junk", Key: "junk"}, now, ReplaceCA, "cannot be read"},
		{"a leaf is no CA", fresh, fresh, now, ReplaceCA, "cannot be read"},
		{"CA about to expire", fresh, mustCA(t, now, CertValidity/2), now, ReplaceCA, "expires"},
		{"CA but no certificate", KeyPair{}, ca, now, Renew, "no route certificate"},
		{"fresh certificate is kept", fresh, ca, now, Keep, ""},
		{"kept until two thirds of its life", fresh, ca, now.Add(CertValidity * 2 / 3).Add(-2 * time.Minute), Keep, ""},
		{"renewed after two thirds of its life", fresh, ca, now.Add(CertValidity * 2 / 3), Renew, "due for renewal"},
		{"signed by another CA", mustIssue(t, otherCA, names, now, CertValidity), ca, now, Renew, "not signed"},
		{"names changed", mustIssue(t, ca, names[:1], now, CertValidity), ca, now, Renew, "names changed"},
		{"names in another order are the same", mustIssue(t, ca, []string{names[1], names[0]}, now, CertValidity), ca, now, Keep, ""},
		{"unreadable certificate", KeyPair{Cert: "junk", Key: "junk"}, ca, now, Renew, "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Due(tc.cert, tc.ca, names, tc.at)
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
	now := time.Now()
	ca := mustCA(t, now, CAValidity)
	names := []string{"*.nats-headless", "*.nats-headless.ns.svc"}
	leaf := mustIssue(t, ca, names, now, CertValidity)
	caCert, _ := ParseCert(ca.Cert)
	cert, _ := ParseCert(leaf.Cert)
	if len(cert.IPAddresses) != 0 {
		t.Errorf("IP SANs %v: route certificates carry names only", cert.IPAddresses)
	}
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
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
