package natscluster

import (
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/pki"
)

// TestTheMoveOffAnIssuedCAStartsWithTheOverlap: the route Secret of an
// earlier release holds a certificate signed by the CA cert-manager
// issued, with or without that CA recorded as its signer. The signer the
// move starts from is the recorded one, or else the issued CA when it
// signed the certificate, never a CA that did not; and from it the first
// step toward the operator's new CA trusts both and still serves the
// issued CA's certificate (pki.PlanRouteTrust). Careless variant caught
// (run): knownSigner returning the recorded signer alone: the "not
// recorded" row moves with NoOverlap, the new CA written alone.
func TestTheMoveOffAnIssuedCAStartsWithTheOverlap(t *testing.T) {
	now := time.Now()
	names := []string{"*.nats-headless.apps.svc"}
	issued := mustCA(t, now)
	unrelated := mustCA(t, now)
	own := mustCA(t, now)
	served, err := pki.Issue(issued, names, now, pki.CertValidity)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		recorded pki.KeyPair
		legacy   *pki.KeyPair
		overlap  bool
	}{
		{"recorded", issued, nil, true},
		{"recorded, issued CA read too", issued, &issued, true},
		{"not recorded, issued CA read", pki.KeyPair{}, &issued, true},
		{"not recorded, a CA that signed nothing of it", pki.KeyPair{}, &unrelated, false},
		{"not recorded, nothing read", pki.KeyPair{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := pki.RouteTLSWritten{Cert: served.Cert, Trusted: []string{issued.Cert}, Signer: tc.recorded}
			written.Signer = knownSigner(written, tc.legacy)
			step := pki.PlanRouteTrust(pki.RouteTrustObservation{CA: own, Written: written, Names: names, Now: now})
			if step.Overlap != tc.overlap || step.NoOverlap == tc.overlap {
				t.Fatalf("Overlap %v, NoOverlap %v (%s), want overlap %v", step.Overlap, step.NoOverlap, step.Why, tc.overlap)
			}
			if !tc.overlap {
				return
			}
			if step.SignWith.Cert != issued.Cert || len(step.Trust) != 2 {
				t.Errorf("signs with the issued CA %v, trusts %d CAs: want the issued CA's certificate served and both trusted",
					step.SignWith.Cert == issued.Cert, len(step.Trust))
			}
		})
	}
}

func mustCA(t *testing.T, now time.Time) pki.KeyPair {
	t.Helper()
	ca, err := pki.NewCA("route CA", now, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
