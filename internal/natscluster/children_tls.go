package natscluster

import (
	"cmp"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// routePKI returns the route CA and certificate the operator keeps for c:
// the CA made anew when pki.Due says it must be, the certificate and the
// CAs the servers trust as signRoutes decides, and when to look again.
// Renewed files reach the servers through their Secret volume and a
// reload: no server restarts.
//
// A CA deleted under running servers is not made anew without the user's
// word (missingGenerated), except on the move from the route CA an issuer
// issued under an earlier release (children_route_ca.go): there the
// operator has never had a CA of its own, and the new one goes through
// the overlap from the issued one. A deleted route certificate is issued
// again from the kept CA, which the servers take by reload.
func (r *Reconciler) routePKI(ctx context.Context, c *v1alpha1.NatsCluster, read map[string]*corev1.Secret) (*render.RoutePKI, time.Duration, *status.Blocker, error) {
	if err := r.deleteLegacyRouteCertificates(ctx, c); err != nil {
		return nil, 0, nil, err
	}
	cert, err := r.ownedKeyPair(ctx, c, c.RouteTLSSecretName(), read)
	if err != nil {
		return nil, 0, nil, err
	}
	var legacy *pki.KeyPair
	ca, blocker, err := r.keptCA(ctx, c, c.CASecretName(), read, func() (bool, error) {
		signer, ok, err := r.legacyRouteSigner(ctx, c, cert.Cert)
		if ok {
			legacy = &signer
		}
		return ok, err
	})
	if err != nil || blocker != nil {
		return nil, 0, blocker, err
	}
	now := time.Now()
	names := c.RouteDNSNames(r.clusterDomain())
	// A CA that must be replaced is made here; the route certificate and
	// the CAs the servers trust follow it through the overlap
	// (signRoutes), never at once.
	if decision := pki.Due(cert, ca, names, now, r.RouteCertRenewBefore); decision.Action == pki.ReplaceCA {
		if ca, err = pki.NewCA(c.Namespace+"/"+c.Name+" route CA", now, pki.CAValidity); err != nil {
			return nil, 0, nil, err
		}
		why := decision.Why
		if legacy != nil {
			why = "moving the routes off the CA cert-manager issued (" + c.LegacyRouteCASecretName() + ") to the operator's own"
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "CertificateIssued", "IssueRouteCA", "made a new route CA: %s", why)
	}
	out, next, err := r.signRoutes(c, ca, names, now, legacy, read[c.RouteTLSSecretName()])
	return out, next, nil, err
}

// keptCA reads a CA the operator keeps for c (the route CA, the client
// CA) from its Secret, recorded in read; empty when there is none yet. A
// CA Secret deleted under servers that were configured with what it
// signed is a blocker (missingGenerated), not a reason to make a new one,
// unless replaceable (nil: never) says a new one may be made.
func (r *Reconciler) keptCA(ctx context.Context, c *v1alpha1.NatsCluster, name string, read map[string]*corev1.Secret, replaceable func() (bool, error)) (pki.KeyPair, *status.Blocker, error) {
	s, foreign, err := r.lookupSecret(ctx, c, name)
	if err != nil {
		return pki.KeyPair{}, nil, err
	}
	if s != nil {
		read[s.Name] = s
		return pki.KeyPair{Cert: string(s.Data[render.TLSCertKey]), Key: string(s.Data[render.TLSKeyKey])}, nil, nil
	}
	if foreign {
		return pki.KeyPair{}, nil, nil
	}
	if replaceable != nil {
		if ok, err := replaceable(); err != nil || ok {
			return pki.KeyPair{}, nil, err
		}
	}
	used, err := r.serversUse(ctx, c)
	if err != nil {
		return pki.KeyPair{}, nil, err
	}
	return pki.KeyPair{}, r.missingGenerated(c, name, used), nil
}

// ownedKeyPair reads tls.crt and tls.key of a Secret the operator made for
// c, recorded in read; anything else (absent, another's) reads as empty.
func (r *Reconciler) ownedKeyPair(ctx context.Context, c *v1alpha1.NatsCluster, name string, read map[string]*corev1.Secret) (pki.KeyPair, error) {
	s, err := r.ownedSecret(ctx, c, name)
	if err != nil || s == nil {
		return pki.KeyPair{}, err
	}
	read[name] = s
	return pki.KeyPair{Cert: string(s.Data[render.TLSCertKey]), Key: string(s.Data[render.TLSKeyKey])}, nil
}

// clusterDomain is the DNS suffix certificates carry.
func (r *Reconciler) clusterDomain() string {
	if r.ClusterDomain == "" {
		return render.DefaultClusterDomain
	}
	return r.ClusterDomain
}

// observeCertificates reads every certificate the servers mount, for the
// CertificatesReady condition, and returns the client CA for the clients'
// credentials Secret. The operator's own route and client certificates
// count as found when they were issued in this pass.
func (r *Reconciler) observeCertificates(ctx context.Context, c *v1alpha1.NatsCluster, cred render.Credentials) ([]status.Certificate, string, error) {
	var out []status.Certificate
	if c.Spec.RouteTLSEnabled() && c.HasRoutes() {
		cert := status.Certificate{Listener: "routes", Secret: c.RouteTLSSecretName()}
		if c.IgnoresRouteIssuer() {
			cert.Note = routeIssuerIgnored(c)
		}
		if routes := cred.RoutePKI; routes != nil {
			fillCertificate(&cert, map[string][]byte{
				render.TLSCertKey: []byte(routes.Cert), render.TLSKeyKey: []byte(routes.Key), render.TLSCAKey: []byte(cmp.Or(routes.Trust, routes.CACert)),
			})
		} else if _, err := r.readCertificate(ctx, c, &cert); err != nil {
			return nil, "", err
		}
		out = append(out, cert)
	}
	cert := status.Certificate{Listener: "client", Secret: c.ClientTLSSecretName()}
	var data map[string][]byte
	var err error
	if p := cred.ClientPKI; p != nil {
		data = map[string][]byte{render.TLSCertKey: []byte(p.Cert.Cert), render.TLSKeyKey: []byte(p.Cert.Key), render.TLSCAKey: []byte(p.CA.Cert)}
		fillCertificate(&cert, data)
	} else if data, err = r.readCertificate(ctx, c, &cert); err != nil {
		return nil, "", err
	}
	clientCA := string(data[render.TLSCAKey])
	out = append(out, cert)
	for _, cert := range topologyCertificates(c) {
		if _, err := r.readCertificate(ctx, c, &cert); err != nil {
			return nil, "", err
		}
		out = append(out, cert)
	}
	return out, clientCA, nil
}

// readCertificate fills cert from its Secret. A Secret of the user's that
// kubenats may not use is reported as such, not as missing: the user named
// it and can act on the reason.
//
// A certificate cert-manager issues may simply not be written yet; but a
// Secret of that name that exists and is not cert-manager's for c is
// someone else's, and refused like a user's: the pods would mount it.
func (r *Reconciler) readCertificate(ctx context.Context, c *v1alpha1.NatsCluster, cert *status.Certificate) (map[string][]byte, error) {
	data, refusal, err := servers.CertificateSecretData(ctx, r.Client, r.UserSecrets, c, cert.Listener)
	if err != nil {
		return nil, err
	}
	if refusal != "" && r.issued(c, cert.Listener) {
		taken, err := r.secretNameTaken(ctx, c, cert.Secret)
		if err != nil || !taken {
			return nil, err
		}
	}
	if refusal != "" {
		cert.Found, cert.Invalid, cert.Refused = true, refusal, true
		return nil, nil
	}
	fillCertificate(cert, data)
	return data, nil
}

// secretNameTaken reports whether a Secret of that name exists that is not
// one cert-manager wrote for c (it carries c's labels). It reads from the
// API server: neither cache holds a Secret that is neither kubenats' nor
// opted in. The read says only whether the name is taken, and the refusal
// that follows reads as for a missing Secret.
func (r *Reconciler) secretNameTaken(ctx context.Context, c *v1alpha1.NatsCluster, name string) (bool, error) {
	var s corev1.Secret
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return s.Labels[render.LabelInstance] != c.Name || s.Labels[render.LabelManagedBy] != render.ManagedBy, nil
}

// refusedMount is the blocker for a certificate Secret that kubenats may
// not use, or nil. It stops the pass before anything is applied, as a
// refused spec.auth.secretRef does: the StatefulSet would mount the Secret
// into pods that run spec.image, and whoever chose the image reads what is
// mounted. Reporting the refusal while applying anyway would hand over
// every TLS key of the namespace.
func refusedMount(certs []status.Certificate) *status.Blocker {
	for _, cert := range certs {
		if cert.Refused {
			return &status.Blocker{Reason: v1alpha1.ReasonSecretNotFound, Fatal: true, Message: cert.Invalid}
		}
	}
	for _, cert := range certs {
		if cert.Mismatched {
			return &status.Blocker{Reason: v1alpha1.ReasonCertificateInvalid, Fatal: true,
				Message: fmt.Sprintf("the %s certificate (Secret %s): %s", cert.Listener, cert.Secret, cert.Invalid)}
		}
	}
	return nil
}

// issued reports whether cert-manager issues the listener's certificate:
// its Secret may simply not be written yet.
func (r *Reconciler) issued(c *v1alpha1.NatsCluster, listener string) bool {
	if listener == "client" {
		return c.Spec.ClientTLS().IssuerRef != nil
	}
	issued, _ := topologyIssued(c, listener)
	return issued // never the routes: their CA is the operator's own
}

// fillCertificate records what a TLS Secret's data says of its certificate.
func fillCertificate(cert *status.Certificate, data map[string][]byte) {
	if len(data[render.TLSCertKey]) == 0 || len(data[render.TLSKeyKey]) == 0 || len(data[render.TLSCAKey]) == 0 {
		return
	}
	cert.Found = true
	parsed, err := pki.ParseCert(string(data[render.TLSCertKey]))
	if err != nil {
		cert.Invalid = "tls.crt holds no readable certificate"
		return
	}
	cert.NotAfter = parsed.NotAfter
	if !pki.KeyMatches(string(data[render.TLSCertKey]), string(data[render.TLSKeyKey])) {
		cert.Invalid, cert.Mismatched = "tls.key is not the private key of tls.crt's certificate", true
	}
}

// certManagerMissing turns an apply that failed for want of cert-manager's
// CRDs into a blocker the user can act on.
func certManagerMissing(err error) *status.Blocker {
	if !meta.IsNoMatchError(err) {
		return nil
	}
	return &status.Blocker{Reason: v1alpha1.ReasonCertManagerMissing, Fatal: true,
		Message: fmt.Sprintf("spec.tls names a cert-manager issuer, but the API server does not serve %s %s: install cert-manager, or name a Secret instead",
			render.CertificateAPIVersion, render.CertificateKind)}
}
