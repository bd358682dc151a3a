package webhook

import (
	"time"

	"github.com/kubenats/kubenats/internal/pki"
)

// ConfigurationName is the ValidatingWebhookConfiguration the install
// ships (config/webhook) and whose CA bundle the operator keeps.
const ConfigurationName = "kubenats"

// ServiceName is the Service in front of the operator's webhook port
// (config/webhook), as the API server dials it.
const ServiceName = "kubenats-webhook"

// SecretName is the Secret, in the operator's namespace, holding the
// webhook's CA and serving certificate. Every replica serves what it holds;
// the leader alone writes it.
const SecretName = "kubenats-webhook-tls"

// Keys of the Secret. caBundle is what the API server trusts: the CA that
// signs now, then a CA it replaced while that one is still valid, so that
// a replica still serving a certificate of the old CA is trusted until it
// has read the new one.
const (
	caBundleKey = "ca.crt"
	caKeyKey    = "ca.key"
	certKey     = "tls.crt"
	keyKey      = "tls.key"
)

// ServingPlan is what the Secret needs: nothing (Data nil), or this data
// written, for Why.
type ServingPlan struct {
	Data map[string][]byte
	Why  string
}

// PlanServingCert decides, from the Secret's data (nil when there is
// none), the names the certificate must carry and now, whether to issue a
// CA or a certificate (pki.Due: a certificate is renewed two thirds into
// its life, the CA once it would expire within a certificate's).
func PlanServingCert(data map[string][]byte, names []string, now time.Time) (ServingPlan, error) {
	bundle := pki.SplitCerts(string(data[caBundleKey]))
	ca := pki.KeyPair{Key: string(data[caKeyKey])}
	if len(bundle) > 0 {
		ca.Cert = bundle[0]
	}
	leaf := pki.KeyPair{Cert: string(data[certKey]), Key: string(data[keyKey])}
	decision := pki.Due(leaf, ca, names, now, 0)
	switch decision.Action {
	case pki.Keep:
		return ServingPlan{}, nil
	case pki.ReplaceCA:
		next, err := pki.NewCA("kubenats webhook CA", now, pki.CAValidity)
		if err != nil {
			return ServingPlan{}, err
		}
		// The CA it replaces stays trusted while still valid.
		bundle = append([]string{next.Cert}, validCerts(bundle, now)...)
		ca = next
	default:
		bundle = append(bundle[:1], validCerts(bundle[1:], now)...)
	}
	leaf, err := pki.Issue(ca, names, now, pki.CertValidity)
	if err != nil {
		return ServingPlan{}, err
	}
	return ServingPlan{Why: decision.Why, Data: map[string][]byte{
		caBundleKey: []byte(pki.Bundle(bundle)),
		caKeyKey:    []byte(ca.Key),
		certKey:     []byte(leaf.Cert),
		keyKey:      []byte(leaf.Key),
	}}, nil
}

// validCerts are those of certs still valid at now and readable.
func validCerts(certs []string, now time.Time) []string {
	var out []string
	for _, c := range certs {
		if cert, err := pki.ParseCert(c); err == nil && now.Before(cert.NotAfter) {
			out = append(out, c)
		}
	}
	return out
}

// caBundle is the CA bundle the Secret's data asks the API server to trust.
func caBundle(data map[string][]byte) []byte { return data[caBundleKey] }

// renewAt is when the Secret's certificate is next due, for the requeue.
func renewAt(data map[string][]byte) (time.Time, bool) {
	return pki.RenewAt(string(data[certKey]), 0)
}
