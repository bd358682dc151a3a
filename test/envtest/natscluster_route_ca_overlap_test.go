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
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.CASecretName()}}
	routeSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.RouteTLSSecretName()}}
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

// TestTheMoveOffAnIssuedRouteCAOverlaps plays a cluster as an earlier
// release left it under spec.tls.routes.issuerRef: no CA of the
// operator's own (<name>-ca), the route certificate signed by the CA
// cert-manager issued into <name>-routes-ca (labelled as the cluster's),
// and no signer recorded beside it. The operator must move it to a CA of
// its own through the overlap, never cutting a route: make the new CA,
// trust the issued and the new one, and keep serving a certificate of
// the issued one while no server has said it loaded the bundle (none
// here: envtest runs no pods), over a window. The issued CA's Secret is
// the user's and stays as it was. Careless variants caught (run): the
// signer not taken from <name>-routes-ca (knownSigner ignoring it): the
// new CA is written alone, and the first wait fails on a ca.crt of one
// CA; a missing <name>-ca read as deleted under running servers
// (keptCA without replaceable): GeneratedSecretMissing, no new CA ever.
func TestTheMoveOffAnIssuedRouteCAOverlaps(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.CASecretName()}}
	routeSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.RouteTLSSecretName()}}
	get(t, caSecret)
	get(t, routeSecret)
	now := time.Now()
	issued, err := pki.NewCA(ns+"/nats route CA", now, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	issuedCA, _ := pki.ParseCert(issued.Cert)
	served, err := pki.Issue(issued, c.RouteDNSNames(render.DefaultClusterDomain), now, pki.CertValidity)
	if err != nil {
		t.Fatal(err)
	}
	// The earlier release's state, in an order where every pass between
	// two steps stops at the missing CA rather than rewriting the route
	// Secret with the operator's CA.
	if err := k8s.Delete(ctx(t), caSecret); err != nil {
		t.Fatal(err)
	}
	legacy := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.LegacyRouteCASecretName(),
			Labels: map[string]string{render.LabelInstance: "nats", render.LabelManagedBy: render.ManagedBy}},
		Type:       corev1.SecretTypeTLS,
		StringData: map[string]string{render.TLSCertKey: issued.Cert, render.TLSKeyKey: issued.Key, render.TLSCAKey: issued.Cert},
	}
	create(t, legacy)
	update(t, routeSecret, func(s *corev1.Secret) {
		s.Data = map[string][]byte{render.TLSCertKey: []byte(served.Cert), render.TLSKeyKey: []byte(served.Key), render.TLSCAKey: []byte(issued.Cert)}
	})
	moving := func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(caSecret), caSecret); err != nil {
			_, reason, msg := readyMessage(t, c)
			return fmt.Errorf("no CA of the operator's own (%v); Ready %s: %s", err, reason, msg)
		}
		own, err := pki.ParseCert(string(caSecret.Data[render.TLSCertKey]))
		if err != nil || own.Equal(issuedCA) {
			return fmt.Errorf("the operator's CA is the issued one or unreadable (%v)", err)
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(routeSecret), routeSecret); err != nil {
			return err
		}
		trusted := pki.SplitCerts(string(routeSecret.Data[render.TLSCAKey]))
		if !trusts(trusted, issuedCA) || !trusts(trusted, own) {
			return fmt.Errorf("ca.crt holds %d CAs, not the issued and the operator's own", len(trusted))
		}
		cert, err := pki.ParseCert(string(routeSecret.Data[render.TLSCertKey]))
		if err != nil {
			return err
		}
		if cert.CheckSignatureFrom(issuedCA) != nil {
			return fmt.Errorf("the route certificate is not the issued CA's while a server may still trust only that CA")
		}
		var kept corev1.Secret
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(legacy), &kept); err != nil || string(kept.Data[render.TLSKeyKey]) != issued.Key {
			return fmt.Errorf("the issued CA's Secret %s was touched (%v): it is the user's", legacy.Name, err)
		}
		return nil
	}
	eventually(t, wait, moving)
	poll.Holds(t, 5*time.Second, moving)
}
