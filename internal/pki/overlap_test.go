package pki

import (
	"testing"
	"time"
)

// TestPlanRouteTrust walks the written states of a CA replacement and
// what may happen around them. The careless step, writing the new CA
// alone as soon as it exists, fails "replaced: trust both, serve old".
func TestPlanRouteTrust(t *testing.T) {
	now := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	names := []string{"*.nats-headless"}
	oldCA := mustCA(t, now.Add(-time.Hour), CAValidity)
	newCA := mustCA(t, now, CAValidity)
	oldCert := mustIssue(t, oldCA, names, now.Add(-time.Hour), CertValidity)
	newCert := mustIssue(t, newCA, names, now.Add(-time.Minute), CertValidity)
	expired := mustIssue(t, oldCA, names, now.Add(-2*CertValidity), CertValidity)
	steady := RouteTLSWritten{Cert: oldCert.Cert, Trusted: []string{oldCA.Cert}, Signer: oldCA}
	for _, tc := range []struct {
		name        string
		ca          KeyPair
		written     RouteTLSWritten
		serving     bool
		wantIssue   bool
		wantSigner  KeyPair
		wantTrust   []string
		wantOverlap bool
		noOverlap   bool
	}{
		{name: "nothing written", ca: newCA, written: RouteTLSWritten{},
			wantIssue: true, wantSigner: newCA, wantTrust: []string{newCA.Cert}},
		{name: "steady: kept", ca: oldCA, written: steady, serving: true,
			wantSigner: oldCA, wantTrust: []string{oldCA.Cert}},
		{name: "ca.crt unreadable: the CA written back, nothing to phase out", ca: oldCA,
			written:    RouteTLSWritten{Cert: oldCert.Cert, Signer: oldCA},
			wantSigner: oldCA, wantTrust: []string{oldCA.Cert}},
		{name: "replaced: trust both, serve old", ca: newCA, written: steady,
			wantIssue: true, wantSigner: oldCA, wantTrust: []string{oldCA.Cert, newCA.Cert}, wantOverlap: true},
		{name: "replaced, a release before kept no signer: the new alone", ca: newCA,
			written:   RouteTLSWritten{Cert: oldCert.Cert, Trusted: []string{oldCA.Cert}},
			wantIssue: true, wantSigner: newCA, wantTrust: []string{newCA.Cert}, noOverlap: true},
		{name: "replaced under an expired certificate: nothing to stay compatible with", ca: newCA,
			written:   RouteTLSWritten{Cert: expired.Cert, Trusted: []string{oldCA.Cert}, Signer: oldCA},
			wantIssue: true, wantSigner: newCA, wantTrust: []string{newCA.Cert}},
		{name: "trusting both, not every server loaded it: wait", ca: newCA,
			written:    RouteTLSWritten{Cert: oldCert.Cert, Trusted: []string{oldCA.Cert, newCA.Cert}, Signer: oldCA},
			wantSigner: oldCA, wantTrust: []string{oldCA.Cert, newCA.Cert}, wantOverlap: true},
		{name: "trusting both, every server loaded it: serve new", ca: newCA, serving: true,
			written:   RouteTLSWritten{Cert: oldCert.Cert, Trusted: []string{oldCA.Cert, newCA.Cert}, Signer: oldCA},
			wantIssue: true, wantSigner: newCA, wantTrust: []string{oldCA.Cert, newCA.Cert}, wantOverlap: true},
		{name: "serving new, not every server yet: keep the old trusted", ca: newCA,
			written:    RouteTLSWritten{Cert: newCert.Cert, Trusted: []string{oldCA.Cert, newCA.Cert}, Signer: newCA},
			wantSigner: newCA, wantTrust: []string{oldCA.Cert, newCA.Cert}, wantOverlap: true},
		{name: "every server serves new: the old goes, with a fresh certificate", ca: newCA, serving: true,
			written:   RouteTLSWritten{Cert: newCert.Cert, Trusted: []string{oldCA.Cert, newCA.Cert}, Signer: newCA},
			wantIssue: true, wantSigner: newCA, wantTrust: []string{newCA.Cert}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := PlanRouteTrust(RouteTrustObservation{CA: tc.ca, Written: tc.written, Names: names, Now: now, Serving: tc.serving})
			if s.Issue != tc.wantIssue || s.SignWith != tc.wantSigner || s.Overlap != tc.wantOverlap || s.NoOverlap != tc.noOverlap {
				t.Errorf("issue %v (want %v), signer old %v new %v, overlap %v (want %v), noOverlap %v (want %v): %s",
					s.Issue, tc.wantIssue, s.SignWith == oldCA, s.SignWith == newCA, s.Overlap, tc.wantOverlap, s.NoOverlap, tc.noOverlap, s.Why)
			}
			if Bundle(s.Trust) != Bundle(tc.wantTrust) {
				t.Errorf("trusts %d CAs (old first: %v), want %d: %s", len(s.Trust), len(s.Trust) > 0 && s.Trust[0] == oldCA.Cert, len(tc.wantTrust), s.Why)
			}
		})
	}
}

// TestCarryRouteTrustNeverRepeatsAnExpiry: the expiry is the servers'
// only word on which certificate they loaded.
func TestCarryRouteTrustNeverRepeatsAnExpiry(t *testing.T) {
	now := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	ca := mustCA(t, now, CAValidity)
	written := mustIssue(t, ca, []string{"a"}, now, CertValidity)
	out, err := CarryRouteTrust(RouteTrustStep{Issue: true, SignWith: ca, Trust: []string{ca.Cert}}, written, []string{"a"}, now)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ParseCert(written.Cert)
	b, _ := ParseCert(out.Cert.Cert)
	if a.NotAfter.Equal(b.NotAfter) {
		t.Fatalf("the new certificate expires at the written one's second, %s", a.NotAfter)
	}
}
