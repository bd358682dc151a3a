package pki

import (
	"crypto/x509"
	"fmt"
	"slices"
	"time"
)

// Action is what a CA and the certificate it signs (routes, clients) need
// next.
type Action int

const (
	// Keep: the CA and the certificate are fine.
	Keep Action = iota
	// ReplaceCA: there is no usable CA; make one and a certificate with it.
	ReplaceCA
	// Renew: issue a new certificate with the existing CA.
	Renew
)

// Decision is an Action and why, for the event that reports it.
type Decision struct {
	Action Action
	Why    string
}

// Due decides what a CA and its certificate need, from the CA and certificate found
// (PEM, empty when absent), the names the certificate must carry, and now.
// A certificate is renewed when less than renewBefore of its life is left
// (two thirds of its life have passed when renewBefore is zero), when its
// names differ, when it no longer chains to the CA, or when it cannot be
// read; the CA is replaced only when it is missing, unreadable or expires
// before a fresh certificate would.
func Due(found KeyPair, foundCA KeyPair, names []string, now time.Time, renewBefore time.Duration) Decision {
	ca, err := ParseCert(foundCA.Cert)
	switch {
	case foundCA.Cert == "" || foundCA.Key == "":
		return Decision{ReplaceCA, "no CA yet"}
	case err != nil || !ca.IsCA:
		return Decision{ReplaceCA, "the CA cannot be read"}
	case ca.NotAfter.Before(now.Add(CertValidity)):
		return Decision{ReplaceCA, "the CA expires within a certificate's lifetime"}
	}
	return dueLeaf(found, ca, names, now, renewBefore)
}

// UsableCA reports whether ca is a readable CA certificate with a key:
// what a CA cert-manager issued must be before the operator signs with
// it. When to renew the certificate it signs is PlanRouteTrust's to say.
func UsableCA(ca KeyPair) bool {
	cert, err := ParseCert(ca.Cert)
	return ca.Key != "" && err == nil && cert.IsCA
}

func dueLeaf(found KeyPair, ca *x509.Certificate, names []string, now time.Time, renewBefore time.Duration) Decision {
	cert, err := ParseCert(found.Cert)
	switch {
	case found.Cert == "" || found.Key == "":
		return Decision{Renew, "no certificate yet"}
	case err != nil:
		return Decision{Renew, "the certificate cannot be read"}
	case cert.CheckSignatureFrom(ca) != nil:
		return Decision{Renew, "the certificate is not signed by the CA"}
	case !sameNames(Names(cert), names):
		return Decision{Renew, "the certificate's names changed"}
	case !now.Before(renewAt(cert, renewBefore)):
		return Decision{Renew, "the certificate is due for renewal"}
	}
	return Decision{Keep, ""}
}

// renewAt is renewBefore ahead of the certificate's end, or two thirds
// into its life when renewBefore is zero.
func renewAt(cert *x509.Certificate, renewBefore time.Duration) time.Time {
	if renewBefore > 0 {
		return cert.NotAfter.Add(-renewBefore)
	}
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(life * 2 / 3)
}

// RenewAt is when Due will ask for a new certificate, for the requeue.
func RenewAt(certPEM string, renewBefore time.Duration) (time.Time, bool) {
	cert, err := ParseCert(certPEM)
	if err != nil {
		return time.Time{}, false
	}
	return renewAt(cert, renewBefore), true
}

// CheckRenewBefore refuses a renewBefore that would renew a fresh
// certificate at once, pass after pass: it must be shorter than a
// certificate's life.
func CheckRenewBefore(renewBefore time.Duration) error {
	if renewBefore < 0 || renewBefore >= CertValidity {
		return fmt.Errorf("the route certificate's renew-before %s must be at least 0 and below its lifetime, %s", renewBefore, CertValidity)
	}
	return nil
}

func sameNames(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
