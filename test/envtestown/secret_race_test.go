package envtestown_test

import (
	"context"
	"crypto/x509"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// TestSecretChangedDuringAPassIsNotOverwritten: the operator renews a
// route certificate (due renewEvery after issuance) computed from the
// Secret it read at the start of its pass. Between that read and its
// write, the test puts another valid certificate from the same CA in the
// Secret: the test's transport holds the operator's write back until the
// test's own has landed, so the interleaving is certain, not timed. The
// operator's write, made over a Secret that changed since its read, must
// fail and its pass start over from what is there now: the Secret holds
// the test's certificate afterwards, until that one falls due.
//
// Careless operator it catches: one that applies the Secret without the
// read's resourceVersion as a precondition (run as a temporary change of
// applyChildren: the Secret held the operator's renewal, computed from
// the old certificate, and the test's was lost). In the loopback suite
// the same race made TestRouteCertificateRenewsUnderPublishing wait in
// vain: a pass that had read before the test's write put the old
// certificate back.
func TestSecretChangedDuringAPassIsNotOverwritten(t *testing.T) {
	const renewEvery = 10 * time.Second
	ns := namespace(t, "race")
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	race := &interleave{path: "/api/v1/namespaces/" + ns + "/secrets/" + c.RouteTLSSecretName(), done: make(chan struct{})}
	cfg := rest.CopyConfig(operatorCfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { race.next = next; return race })
	startOperatorWith(t, cfg, manager.Options{RouteCertificateRenewBefore: pki.CertValidity - renewEvery}, ns)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	caSecret, routeSecret := routeSecrets(t, c)
	ca := pki.KeyPair{Cert: string(caSecret.Data[render.TLSCertKey]), Key: string(caSecret.Data[render.TLSKeyKey])}
	ours, err := pki.Issue(ca, c.RouteDNSNames(render.DefaultClusterDomain), time.Now(), pki.CertValidity)
	if err != nil {
		t.Fatal(err)
	}
	// The operator's next write of the route Secret is its renewal; the
	// test's certificate lands just before it reaches the API server.
	race.arm(func() error {
		s := &corev1.Secret{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(routeSecret), s); err != nil {
			return err
		}
		s.Data[render.TLSCertKey], s.Data[render.TLSKeyKey] = []byte(ours.Cert), []byte(ours.Key)
		return k8s.Update(context.Background(), s)
	})
	select {
	case <-race.done:
	case <-time.After(renewEvery + wait):
		t.Fatal("the operator never wrote the route Secret again: no renewal")
	}
	if race.err != nil {
		t.Fatalf("the test's own write: %v", race.err)
	}
	if err := readSecret(routeSecret); err != nil {
		t.Fatal(err)
	}
	if got := string(routeSecret.Data[render.TLSCertKey]); got != ours.Cert {
		held, _ := pki.ParseCert(got)
		t.Fatalf("the Secret holds the operator's certificate (serial %v), written over the test's that landed after the operator read: got status %d for that write", serial(held), race.status)
	}
	t.Logf("the operator's write over the changed Secret was answered %d; the Secret kept the test's certificate", race.status)
}

// serial names a certificate in a failure.
func serial(c *x509.Certificate) string {
	if c == nil {
		return "unreadable"
	}
	return c.SerialNumber.String()
}

// interleave is the operator's transport: once armed, the first write to
// path waits while before runs (the test's own write), then goes on.
type interleave struct {
	next http.RoundTripper
	path string

	mu     sync.Mutex
	before func() error
	done   chan struct{}
	err    error // before's
	status int   // what the API server answered the held write
}

func (i *interleave) arm(before func() error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.before = before
}

func (i *interleave) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPatch && req.Method != http.MethodPut || req.URL.Path != i.path {
		return i.next.RoundTrip(req)
	}
	i.mu.Lock()
	before := i.before
	i.before = nil
	i.mu.Unlock()
	if before == nil {
		return i.next.RoundTrip(req)
	}
	i.err = before()
	resp, err := i.next.RoundTrip(req)
	if err == nil {
		i.status = resp.StatusCode
	}
	close(i.done)
	return resp, err
}
