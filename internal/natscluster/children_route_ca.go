package natscluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=delete

// Earlier releases asked the issuer named by spec.tls.routes.issuerRef
// for a route CA of the cluster's own (<name>-routes-ca, isCA), a sub-CA
// of the issuer's CA in the tenant's namespace. The route CA is now always
// the operator's (NatsCluster.GeneratesRoutePKI); what is left of the old way
// is moved off here:
//
//   - the Certificates the cluster controls are deleted, or cert-manager
//     would keep renewing the CA; the Secret cert-manager wrote stays (it
//     is the user's to delete, and what the move reads);
//   - the servers, which serve a certificate of the issued CA, go over to
//     the operator's own CA through the route trust overlap
//     (pki.PlanRouteTrust): the issued CA is the CA being replaced, the
//     new one is made at once, and the servers trust both until each
//     serves a certificate of the new one. No route is cut.

// legacyRouteSigner is the route CA cert-manager issued for c under an
// earlier release, with its key, when it signed the route certificate the
// servers were given last (written, tls.crt of <name>-routes-tls): the
// CA the move to the operator's own starts from. ok is false when there
// is nothing to move from.
func (r *Reconciler) legacyRouteSigner(ctx context.Context, c *v1alpha1.NatsCluster, written string) (_ pki.KeyPair, ok bool, _ error) {
	if written == "" {
		return pki.KeyPair{}, false, nil
	}
	s, err := r.legacyRouteCASecret(ctx, c)
	if err != nil || s == nil {
		return pki.KeyPair{}, false, err
	}
	ca := pki.KeyPair{Cert: pki.FirstCertPEM(string(s.Data[render.TLSCertKey])), Key: string(s.Data[render.TLSKeyKey])}
	return ca, signedBy(written, ca), nil
}

// legacyRouteCASecret is the Secret cert-manager wrote for c's route CA
// Certificate (it carries c's labels through the Certificate's
// secretTemplate), or nil. It is read from the API server: the cache
// holds it only while it has those labels, and one read a pass, only on
// the way to a CA the operator does not have yet, costs little.
func (r *Reconciler) legacyRouteCASecret(ctx context.Context, c *v1alpha1.NatsCluster) (*corev1.Secret, error) {
	var s corev1.Secret
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.LegacyRouteCASecretName()}, &s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case s.Labels[render.LabelInstance] != c.Name || s.Labels[render.LabelManagedBy] != render.ManagedBy:
		return nil, nil
	}
	return &s, nil
}

// signedBy reports whether ca, a readable CA with its key, signed the
// certificate certPEM (the first of a chain).
func signedBy(certPEM string, ca pki.KeyPair) bool {
	if !pki.UsableCA(ca) {
		return false
	}
	caCert, _ := pki.ParseCert(ca.Cert)
	cert, err := pki.ParseCert(pki.FirstCertPEM(certPEM))
	return err == nil && cert.CheckSignatureFrom(caCert) == nil
}

// deleteLegacyRouteCertificates removes the route Certificates earlier
// releases asked an issuer for (NatsCluster.LegacyRouteCertificateNames) when
// c controls them: the route certificate, and the route CA cert-manager
// would otherwise keep renewing. Only the Certificate objects: the Secrets
// cert-manager wrote are left to the user.
func (r *Reconciler) deleteLegacyRouteCertificates(ctx context.Context, c *v1alpha1.NatsCluster) error {
	for _, name := range c.LegacyRouteCertificateNames() {
		crt := &unstructured.Unstructured{}
		crt.SetAPIVersion(render.CertificateAPIVersion)
		crt.SetKind(render.CertificateKind)
		err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, crt)
		switch {
		case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
			// None, or no cert-manager at all.
			continue
		case err != nil:
			return err
		case !metav1.IsControlledBy(crt, c):
			continue
		}
		uid := crt.GetUID()
		if err := r.Delete(ctx, crt, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.Recorder.Eventf(c, crt, corev1.EventTypeNormal, "Removed", "Prune",
			"removed Certificate %s: the route CA is the operator's own, no issuer is asked for one", name)
	}
	return nil
}

// reportIgnoredRouteIssuer says, while c still names a route issuer,
// that nothing asks it for anything.
func (r *Reconciler) reportIgnoredRouteIssuer(c *v1alpha1.NatsCluster) {
	if c.IgnoresRouteIssuer() {
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, reasonRouteIssuerIgnored, "IssueRouteCA", "%s", routeIssuerIgnored(c))
	}
}

// reasonRouteIssuerIgnored: spec.tls.routes.issuerRef is set and ignored.
const reasonRouteIssuerIgnored = "RouteIssuerIgnored"

func routeIssuerIgnored(c *v1alpha1.NatsCluster) string {
	return "spec.tls.routes.issuerRef is ignored: the route CA is the operator's own (Secret " + c.CASecretName() +
		"), never one an issuer signs; remove the field"
}
