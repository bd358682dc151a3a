package status

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Certificate is what the controller found of one certificate the servers
// mount.
type Certificate struct {
	// Listener is what it secures: routes, client.
	Listener string
	// Secret holds it.
	Secret string
	// Found: the Secret exists with tls.crt, tls.key and ca.crt.
	Found bool
	// Invalid says why tls.crt cannot be used, "" when it can.
	Invalid string
	// Mismatched: tls.key is not the key of tls.crt. nats-server would
	// refuse the pair at start or reload, and a certificate presented with
	// a key that is not its own proves nothing: nothing is applied while
	// it is so (Invalid says it).
	Mismatched bool
	// Refused: the Secret is not one kubenats may use (a user's Secret not
	// opted in, missing included). Invalid says why. Nothing may mount it:
	// the pods run spec.image, which reads whatever is mounted.
	Refused bool
	// NotAfter is when tls.crt expires.
	NotAfter time.Time
	// Note is what the user should know of it even when it is ready (a
	// spec field that no longer counts), "" for nothing.
	Note string
}

// certificates is the CertificatesReady verdict and the earliest expiry.
func certificates(certs []Certificate, now time.Time) (Verdict, *metav1.Time) {
	v := Verdict{Type: v1alpha1.ConditionCertificatesReady, Status: metav1.ConditionTrue}
	if len(certs) == 0 {
		v.Reason, v.Message = v1alpha1.ReasonNoTLS, "no listener uses TLS"
		return v, nil
	}
	var earliest *metav1.Time
	for _, c := range certs {
		if !c.Found {
			return certsNotReady(v1alpha1.ReasonCertificateMissing,
				fmt.Sprintf("the %s certificate (Secret %s) does not exist yet or lacks tls.crt, tls.key or ca.crt", c.Listener, c.Secret)), nil
		}
		if c.Invalid != "" {
			return certsNotReady(v1alpha1.ReasonCertificateInvalid, fmt.Sprintf("the %s certificate (Secret %s): %s", c.Listener, c.Secret, c.Invalid)), nil
		}
		if !now.Before(c.NotAfter) {
			return certsNotReady(v1alpha1.ReasonCertificateExpired,
				fmt.Sprintf("the %s certificate (Secret %s) expired at %s", c.Listener, c.Secret, c.NotAfter.UTC().Format(time.RFC3339))), nil
		}
		if earliest == nil || c.NotAfter.Before(earliest.Time) {
			earliest = &metav1.Time{Time: c.NotAfter.UTC().Truncate(time.Second)}
		}
	}
	v.Reason = v1alpha1.ReasonCertificatesReady
	v.Message = fmt.Sprintf("%d certificates ready, the first expires at %s", len(certs), earliest.Format(time.RFC3339))
	for _, c := range certs {
		if c.Note != "" {
			v.Message += "; " + c.Note
		}
	}
	return v, earliest
}

func certsNotReady(reason, msg string) Verdict {
	return Verdict{Type: v1alpha1.ConditionCertificatesReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}
