package envtest_test

import (
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// TestAReplacedRouteCAIsNotWrittenAlone: the operator's route CA
// (nats-ca) is replaced by another valid CA under a cluster whose route
// certificate the old one signed. The operator must trust both and keep
// serving a certificate of the old CA, and, since no server here ever
// reports what it loaded (envtest runs no pods), hold that state over a
// window: it may not move on before every server said so. Main before
// the overlap (ca.crt and a certificate of the new CA written at once)
// fails the first wait: ca.crt never holds the two CAs.
func TestAReplacedRouteCAIsNotWrittenAlone(t *testing.T) {
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: render.CASecretName(c)}}
	routeSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: render.RouteTLSSecretName(c)}}
	get(t, caSecret)
	get(t, routeSecret)
	oldCA, err := pki.ParseCert(string(caSecret.Data[render.TLSCertKey]))
	if err != nil {
		t.Fatal(err)
	}
	replacement, err := pki.NewCA(ns+"/nats route CA", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	newCA, _ := pki.ParseCert(replacement.Cert)
	update(t, caSecret, func(s *corev1.Secret) {
		s.Data[render.TLSCertKey], s.Data[render.TLSKeyKey] = []byte(replacement.Cert), []byte(replacement.Key)
	})
	overlapping := func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(routeSecret), routeSecret); err != nil {
			return err
		}
		trusted := pki.SplitCerts(string(routeSecret.Data[render.TLSCAKey]))
		if !trusts(trusted, oldCA) || !trusts(trusted, newCA) {
			return fmt.Errorf("ca.crt holds %d CAs, not the old and the new one", len(trusted))
		}
		cert, err := pki.ParseCert(string(routeSecret.Data[render.TLSCertKey]))
		if err != nil {
			return err
		}
		if cert.CheckSignatureFrom(oldCA) != nil {
			return fmt.Errorf("the route certificate is not the old CA's while a server may still trust only the old CA")
		}
		return nil
	}
	eventually(t, wait, overlapping)
	poll.Holds(t, 5*time.Second, overlapping)
}

func trusts(pems []string, ca *x509.Certificate) bool {
	for _, p := range pems {
		if c, err := pki.ParseCert(p); err == nil && c.Equal(ca) {
			return true
		}
	}
	return false
}
