package natscluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// overlapRecheck is how soon a cluster whose route CA is being replaced
// is looked at again: the next written state waits only for the servers'
// reloads, which raise no Kubernetes event.
const overlapRecheck = 5 * time.Second

// signRoutes writes the route certificate of c with the operator's route
// CA ca as pki.PlanRouteTrust decides: a CA that replaced the one the
// servers trust goes through the overlap, never alone. legacy (nil: none)
// is the CA cert-manager issued under an earlier release, when it signed
// the certificate the servers serve: it stands in for the signer the
// route Secret does not record, so that the move off it overlaps too.
// s is the route TLS Secret this pass read (nil: none). It returns what
// to write and when to look again.
func (r *Reconciler) signRoutes(c *v1alpha1.NatsCluster, ca pki.KeyPair, names []string, now time.Time, legacy *pki.KeyPair, s *corev1.Secret) (*render.RoutePKI, time.Duration, error) {
	written, pair := writtenRouteTLS(s)
	written.Signer = knownSigner(written, legacy)
	step := pki.PlanRouteTrust(pki.RouteTrustObservation{
		CA: ca, Written: written, Names: names, Now: now, RenewBefore: r.RouteCertRenewBefore,
		Serving: r.everyServerServes(c, "routes", written.Cert),
	})
	out, err := pki.CarryRouteTrust(step, pair, names, now)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case step.NoOverlap:
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "RouteCAReplaced", "IssueRouteCertificate",
			"%s; servers that reload at different moments cannot route to each other until the last one reloaded", step.Why)
	case step.Issue:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "CertificateIssued", "IssueRouteCertificate",
			"issued the route certificate: %s", step.Why)
	}
	p := &render.RoutePKI{CACert: ca.Cert, CAKey: ca.Key, Cert: out.Cert.Cert, Key: out.Cert.Key, Trust: out.Trust, Signer: out.Signer}
	var next time.Duration
	if at, ok := pki.RenewAt(out.Cert.Cert, r.RouteCertRenewBefore); ok {
		next = max(time.Until(at), time.Second)
	}
	if step.Overlap {
		next = soonest(next, overlapRecheck)
	}
	return p, next, nil
}

// writtenRouteTLS reads the route TLS Secret the operator wrote (nil:
// none yet): the certificate, the CAs trusted, the signer kept beside
// them, and the certificate's pair.
func writtenRouteTLS(s *corev1.Secret) (pki.RouteTLSWritten, pki.KeyPair) {
	if s == nil {
		return pki.RouteTLSWritten{}, pki.KeyPair{}
	}
	cert := pki.FirstCertPEM(string(s.Data[render.TLSCertKey]))
	return pki.RouteTLSWritten{
			Cert:    cert,
			Trusted: pki.SplitCerts(string(s.Data[render.TLSCAKey])),
			Signer:  pki.KeyPair{Cert: string(s.Data[render.RouteSignerCertKey]), Key: string(s.Data[render.RouteSignerKeyKey])},
		},
		pki.KeyPair{Cert: string(s.Data[render.TLSCertKey]), Key: string(s.Data[render.TLSKeyKey])}
}

// everyServerServes reports whether every server of c said, after
// loading the files last written, that its listener serves certPEM (by
// its expiry, the servers' only word on it; pki.CarryRouteTrust never
// repeats one). It knows only what this operator saw: a restarted one
// waits for the servers to say it again.
func (r *Reconciler) everyServerServes(c *v1alpha1.NatsCluster, listener, certPEM string) bool {
	cert, err := pki.ParseCert(certPEM)
	if err != nil {
		return false
	}
	return r.reloads.confirmedMark(c.UID, certMark(listener), cert.NotAfter.UTC().Format(time.RFC3339))
}

// knownSigner is the CA that signed the written route certificate, with
// its key: the one the route Secret records, or else legacy when it
// signed it (an earlier release recorded no signer). Nothing else stands
// in: a signer that did not sign the servers' certificate bridges
// nothing.
func knownSigner(written pki.RouteTLSWritten, legacy *pki.KeyPair) pki.KeyPair {
	if legacy == nil || signedBy(written.Cert, written.Signer) || !signedBy(written.Cert, *legacy) {
		return written.Signer
	}
	return *legacy
}
