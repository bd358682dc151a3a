package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=delete

// issuedRoutePKI signs the route certificate with the cluster's own route
// CA, which cert-manager issues from the issuer the routes name
// (render.SignsRouteCertificate says why a CA per cluster), and returns
// when to look again for the certificate's renewal. Until cert-manager
// wrote the CA there is no route certificate: the pods wait for its
// Secret, and CertificatesReady says so; the CA's Secret, labelled as the
// cluster's, wakes the operator when it comes.
func (r *NatsClusterReconciler) issuedRoutePKI(ctx context.Context, c *v1alpha1.NatsCluster) (*render.RoutePKI, time.Duration, *status.Blocker, error) {
	if err := r.deleteLegacyRouteCertificate(ctx, c); err != nil {
		return nil, 0, nil, err
	}
	var caSecret corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: render.RouteCASecretName(c)}, &caSecret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, 0, nil, nil
	case err != nil:
		return nil, 0, nil, err
	case caSecret.Labels[render.LabelInstance] != c.Name || caSecret.Labels[render.LabelManagedBy] != render.ManagedBy:
		// Not the one cert-manager wrote for c: never signed with.
		return nil, 0, &status.Blocker{Reason: v1alpha1.ReasonCertificateInvalid, Fatal: true,
			Message: "Secret " + caSecret.Name + " is not the route CA cert-manager issued for this cluster (it lacks the cluster's labels): delete it, cert-manager writes it anew"}, nil
	}
	ca := pki.KeyPair{Cert: pki.FirstCertPEM(string(caSecret.Data[render.TLSCertKey])), Key: string(caSecret.Data[render.TLSKeyKey])}
	if !pki.UsableCA(ca) {
		return nil, 0, &status.Blocker{Reason: v1alpha1.ReasonCertificateInvalid,
			Message: "the route CA in Secret " + caSecret.Name + " is not a readable CA certificate with its key: the issuer must be able to issue CA certificates (isCA), as a CA or Vault issuer does"}, nil
	}
	// cert-manager renews the CA with its key (rotationPolicy Never), and
	// the certificates it signed still verify; a CA with a new key (its
	// Secret deleted, another key algorithm) goes through the overlap.
	out, next, err := r.signRoutes(ctx, c, ca, render.RouteDNSNames(c, r.clusterDomain()), time.Now())
	return out, next, nil, err
}

// deleteLegacyRouteCertificate removes the route Certificate c had before
// its routes got a CA of their own, when c controls it: cert-manager would
// keep rewriting the Secret the operator now writes.
func (r *NatsClusterReconciler) deleteLegacyRouteCertificate(ctx context.Context, c *v1alpha1.NatsCluster) error {
	crt := &unstructured.Unstructured{}
	crt.SetAPIVersion(render.CertificateAPIVersion)
	crt.SetKind(render.CertificateKind)
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: render.LegacyRouteCertificateName(c)}, crt)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		// None, or no cert-manager: the apply of the route CA's
		// Certificate reports that (certManagerMissing).
		return nil
	case err != nil:
		return err
	case !metav1.IsControlledBy(crt, c):
		return nil
	}
	uid := crt.GetUID()
	return client.IgnoreNotFound(r.Delete(ctx, crt, client.Preconditions{UID: &uid}))
}
