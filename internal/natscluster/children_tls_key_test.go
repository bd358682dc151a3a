package natscluster

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// TestACertificateWithAnotherKeyStopsThePass: a certificate Secret whose
// tls.key is not the key of its tls.crt (another certificate's key of
// the same CA; the same key in SEC 1 form, which is its own and passes)
// is marked and stops the pass with CertificateInvalid naming the
// listener, for every listener, the gateway and leafnodes included.
// Careless variant caught (run): fillCertificate reading only tls.crt
// (the release before): the mismatched rows got no blocker.
func TestACertificateWithAnotherKeyStopsThePass(t *testing.T) {
	now := time.Now()
	ca, err := pki.NewCA("tenant CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := pki.Issue(ca, []string{"nats.apps.svc"}, now, time.Hour)
	other, _ := pki.Issue(ca, []string{"nats.apps.svc"}, now, time.Hour)
	for _, listener := range []string{"routes", "client", "leafnodes", "gateway"} {
		for _, tc := range []struct {
			name     string
			key      string
			mismatch bool
		}{
			{"its own key", served.Key, false},
			{"its own key as SEC 1", sec1(t, served.Key), false},
			{"another certificate's key", other.Key, true},
			{"the CA's key", ca.Key, true},
			{"no readable key", "not a key", true},
		} {
			cert := status.Certificate{Listener: listener, Secret: "own-tls"}
			fillCertificate(&cert, map[string][]byte{
				render.TLSCertKey: []byte(served.Cert), render.TLSKeyKey: []byte(tc.key), render.TLSCAKey: []byte(ca.Cert),
			})
			blocker := refusedMount([]status.Certificate{cert})
			switch {
			case cert.Mismatched != tc.mismatch:
				t.Errorf("%s, %s: Mismatched %v, want %v", listener, tc.name, cert.Mismatched, tc.mismatch)
			case tc.mismatch && (blocker == nil || blocker.Reason != v1alpha1.ReasonCertificateInvalid || !blocker.Fatal):
				t.Errorf("%s, %s: blocker %+v, want a fatal CertificateInvalid", listener, tc.name, blocker)
			case !tc.mismatch && blocker != nil:
				t.Errorf("%s, %s: blocked (%s)", listener, tc.name, blocker.Message)
			}
		}
	}
}

// sec1 is an ECDSA key of PKCS#8 PEM rewritten in SEC 1 form ("EC PRIVATE
// KEY"), another form nats-server reads.
func sec1(t *testing.T, pkcs8 string) string {
	t.Helper()
	block, _ := pem.Decode([]byte(pkcs8))
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}
