package pki

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"time"
)

// A replaced route CA is not written alone. Each server takes the new
// files when its kubelet refreshed them and it reloaded, which is at a
// moment of its own: a server that trusts only the new CA refuses the
// routes of one that still serves a certificate of the old one, and the
// other way round, so the cluster splits for as long as the reloads are
// spread. The transition therefore goes in three written states, each of
// which can run beside the one before it:
//
//  1. Trust both, serve old: ca.crt holds the old and the new CA, and the
//     servers get a fresh certificate from the old CA. Every server, at
//     either state, trusts the certificate every other serves.
//  2. Trust both, serve new: once every server serves the certificate of
//     state 1 (it came in the same Secret as the bundle, so it loaded the
//     bundle too), a certificate from the new CA.
//  3. Trust the new alone: once every server serves the certificate of
//     state 2, the old CA goes, with a fresh certificate from the new CA
//     so that the reload that drops it is seen.
//
// Each state issues a certificate: the servers report only the expiry of
// what they serve, and a new certificate is how the operator learns that
// a server loaded the Secret it came in.
//
// The old CA's key is needed for state 1: the route Secret keeps the CA
// that signed its certificate (Signer). Without it (a Secret written by a
// release before this one whose CA was then replaced, or an expired
// certificate) no overlap is possible, and the new CA is written alone.

// RouteTLSWritten is what the route TLS Secret holds now.
type RouteTLSWritten struct {
	// Cert is the route certificate (tls.crt's first), Trusted the CAs of
	// ca.crt, Signer the CA that signed Cert with its key.
	Cert    string
	Trusted []string
	Signer  KeyPair
}

// RouteTrustObservation is what the route trust step is decided from.
type RouteTrustObservation struct {
	// CA is the route CA to end up with (the operator's or cert-manager's).
	CA      KeyPair
	Written RouteTLSWritten
	// Names are what the certificate must carry; Now and RenewBefore as
	// for Due.
	Names       []string
	Now         time.Time
	RenewBefore time.Duration
	// Serving: every server serves Written.Cert (its expiry is what each
	// reported after loading the files written last).
	Serving bool
}

// RouteTrustStep is what to write.
type RouteTrustStep struct {
	// Issue: a new certificate, signed by SignWith; otherwise the written
	// one stays (and SignWith is its signer).
	Issue    bool
	SignWith KeyPair
	// Trust is ca.crt's CAs, PEM each.
	Trust []string
	// Overlap: the old CA is still trusted; the step after it waits for
	// every server to serve what this one writes.
	Overlap bool
	// NoOverlap: the CA was replaced and the old one cannot be bridged
	// (see above): servers reloading at different moments split until
	// the last one reloaded. Worth a Warning event.
	NoOverlap bool
	Why       string
}

// PlanRouteTrust decides the next written state of the route TLS Secret.
// It is pure: what the Secret holds, the CA, and whether every server
// serves the certificate written, in; the step out.
func PlanRouteTrust(o RouteTrustObservation) RouteTrustStep {
	caPEM := FirstCertPEM(o.CA.Cert)
	ca, caErr := ParseCert(caPEM)
	cert, certErr := ParseCert(o.Written.Cert)
	usable := certErr == nil && caErr == nil && o.Now.Before(cert.NotAfter)
	switch {
	case !usable:
		// Nothing served now to stay compatible with.
		return RouteTrustStep{Issue: true, SignWith: o.CA, Trust: []string{caPEM}, Why: leafWhy(o)}
	case cert.CheckSignatureFrom(ca) == nil:
		return signedByCA(o, caPEM, ca)
	}
	signer, signerErr := ParseCert(FirstCertPEM(o.Written.Signer.Cert))
	if signerErr != nil || o.Written.Signer.Key == "" || cert.CheckSignatureFrom(signer) != nil {
		return RouteTrustStep{Issue: true, SignWith: o.CA, Trust: []string{caPEM}, NoOverlap: true,
			Why: "the route CA was replaced and the CA that signed the servers' certificate is not known: the new CA is trusted alone"}
	}
	trust := withCert(o.Written.Trusted, FirstCertPEM(o.Written.Signer.Cert))
	if !containsCert(trust, caPEM) {
		return RouteTrustStep{Issue: true, SignWith: o.Written.Signer, Trust: withCert(trust, caPEM), Overlap: true,
			Why: "the route CA was replaced: trusting the old and the new CA, still serving a certificate of the old one"}
	}
	if o.Serving {
		return RouteTrustStep{Issue: true, SignWith: o.CA, Trust: trust, Overlap: true,
			Why: "every server trusts the new route CA: serving a certificate of it, still trusting the old one"}
	}
	d := dueLeaf(KeyPair{Cert: o.Written.Cert, Key: "x"}, signer, o.Names, o.Now, o.RenewBefore)
	return RouteTrustStep{Issue: d.Action == Renew, SignWith: o.Written.Signer, Trust: trust, Overlap: true,
		Why: "waiting for every server to trust the new route CA: " + d.Why}
}

// signedByCA: the written certificate is the CA's; the old CA, if still
// trusted, goes once every server serves it.
func signedByCA(o RouteTrustObservation, caPEM string, ca *x509.Certificate) RouteTrustStep {
	d := dueLeaf(KeyPair{Cert: o.Written.Cert, Key: "x"}, ca, o.Names, o.Now, o.RenewBefore)
	// Nothing trusted but the CA (or nothing readable at all): no other CA
	// to phase out.
	alone := len(withCert(o.Written.Trusted, caPEM)) == 1
	switch {
	case alone:
		return RouteTrustStep{Issue: d.Action == Renew, SignWith: o.CA, Trust: []string{caPEM}, Why: d.Why}
	case o.Serving:
		return RouteTrustStep{Issue: true, SignWith: o.CA, Trust: []string{caPEM},
			Why: "every server serves a certificate of the new route CA: the old one is no longer trusted"}
	}
	return RouteTrustStep{Issue: d.Action == Renew, SignWith: o.CA, Trust: withCert(o.Written.Trusted, caPEM), Overlap: true,
		Why: "waiting for every server to serve a certificate of the new route CA: " + d.Why}
}

func leafWhy(o RouteTrustObservation) string {
	if o.Written.Cert == "" {
		return "no route certificate yet"
	}
	return "the route certificate cannot be read or has expired"
}

// SplitCerts is each certificate of a PEM bundle, PEM.
func SplitCerts(bundle string) []string {
	var out []string
	rest := []byte(bundle)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		if block.Type == "CERTIFICATE" {
			out = append(out, string(pem.EncodeToMemory(block)))
		}
	}
}

// Bundle is certificates as one PEM file.
func Bundle(certs []string) string { return strings.Join(certs, "") }

func containsCert(certs []string, c string) bool {
	for _, x := range certs {
		if x == c {
			return true
		}
	}
	return false
}

// withCert is certs with c at the end, once.
func withCert(certs []string, c string) []string {
	out := []string{}
	for _, x := range certs {
		if x != "" && !containsCert(out, x) {
			out = append(out, x)
		}
	}
	if c != "" && !containsCert(out, c) {
		out = append(out, c)
	}
	return out
}

// RouteTLS is what the route TLS Secret is to hold.
type RouteTLS struct {
	Cert   KeyPair
	Trust  string
	Signer KeyPair
}

// CarryRouteTrust carries out s: the certificate issued (or the written
// one, written, kept), the bundle, and the signer to keep beside them. A
// new certificate never expires in the same second as the written one:
// its expiry is how the servers say they loaded it.
func CarryRouteTrust(s RouteTrustStep, written KeyPair, names []string, now time.Time) (RouteTLS, error) {
	out := RouteTLS{Cert: written, Trust: Bundle(s.Trust), Signer: s.SignWith}
	if !s.Issue {
		return out, nil
	}
	validity := CertValidity
	if old, err := ParseCert(written.Cert); err == nil && old.NotAfter.Unix() == now.Add(validity).Unix() {
		validity += time.Second
	}
	cert, err := Issue(s.SignWith, names, now, validity)
	if err != nil {
		return RouteTLS{}, err
	}
	out.Cert = cert
	return out, nil
}
