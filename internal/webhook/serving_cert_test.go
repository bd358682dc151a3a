package webhook

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/pki"
)

var names = []string{"kubenats-webhook.kubenats-system.svc"}

// TestPlanServingCert walks a Secret through its life: issued, kept,
// renewed under the same CA (the bundle unchanged, so the API server's
// trust need not move), and the CA replaced with the old one still in the
// bundle while it is valid, then dropped once expired. Careless variants
// caught: a bundle holding only the new CA (a replica still serving the
// old certificate is refused until it reads the Secret), a renewal that
// makes a new CA each time.
func TestPlanServingCert(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	first := mustPlan(t, nil, now, "no CA yet")
	verifies(t, first.Data, first.Data)

	if p, err := PlanServingCert(first.Data, names, now.Add(24*time.Hour)); err != nil || p.Data != nil {
		t.Fatalf("a fresh certificate: %+v, %v", p, err)
	}

	renewed := mustPlan(t, first.Data, now.Add(61*24*time.Hour), "the certificate is due for renewal")
	if string(caBundle(renewed.Data)) != string(caBundle(first.Data)) {
		t.Error("a renewal changed the CA bundle")
	}
	verifies(t, renewed.Data, renewed.Data)

	moved := mustPlan(t, first.Data, now.Add(pki.CAValidity-30*24*time.Hour), "the CA expires within a certificate's lifetime")
	if got := len(pki.SplitCerts(string(caBundle(moved.Data)))); got != 2 {
		t.Fatalf("bundle after the CA moved holds %d CAs, want the new and the old", got)
	}
	verifies(t, moved.Data, moved.Data)
	verifies(t, moved.Data, renewed.Data) // a replica not yet reloaded

	later := mustPlan(t, moved.Data, now.Add(pki.CAValidity+62*24*time.Hour), "the certificate is due for renewal")
	if got := len(pki.SplitCerts(string(caBundle(later.Data)))); got != 1 {
		t.Errorf("bundle after the old CA expired holds %d CAs, want 1", got)
	}

	withAddress := append([]string{"127.0.0.1"}, names...)
	if p, err := PlanServingCert(first.Data, withAddress, now); err != nil || p.Why != "the certificate's names changed" {
		t.Errorf("names changed: %q, %v", p.Why, err)
	}
}

func mustPlan(t *testing.T, data map[string][]byte, now time.Time, why string) ServingPlan {
	t.Helper()
	p, err := PlanServingCert(data, names, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Data == nil || p.Why != why {
		t.Fatalf("plan %q, want %q", p.Why, why)
	}
	return p
}

// verifies: the certificate of served verifies under the bundle of trusted
// for the webhook's name, as the API server checks it.
func verifies(t *testing.T, trusted, served map[string][]byte) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle(trusted)) {
		t.Fatal("no CA in the bundle")
	}
	cert, err := pki.ParseCert(string(served[certKey]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: names[0], Roots: roots, CurrentTime: cert.NotBefore.Add(time.Hour)}); err != nil {
		t.Errorf("the served certificate is not trusted: %v", err)
	}
}
