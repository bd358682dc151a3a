package plan

// ClientTLSServed is what a StatefulSet's pod template says its servers'
// client port serves, as the operator reads it before this pass applies
// anything.
type ClientTLSServed struct {
	// Found is false when there is no StatefulSet yet: a new cluster.
	Found bool
	// Mark is the template's kubenats.io/client-tls mark:
	// "required" or "plaintext-accepted"; empty when the template carries
	// none (a release before client TLS by default wrote it).
	Mark string
	// MountsClientTLS is whether that template mounts a client
	// certificate: an earlier release did only with spec.tls.client set.
	MountsClientTLS bool
}

// ServesNoTLS reports whether these servers serve no client TLS at all:
// an earlier release started them without spec.tls.client.
func (s ClientTLSServed) ServesNoTLS() bool { return s.Found && s.Mark == "" && !s.MountsClientTLS }

// Values of ClientTLSServed.Mark.
const (
	ClientTLSRequired          = "required"
	ClientTLSPlaintextAccepted = "plaintext-accepted"
)

// ClientPlaintext decides whether the servers accept clients without TLS
// beside those with it, when spec.tls.client.allowPlaintext is asked
// (nil: not said).
//
// What the spec says is done. Unsaid, a new cluster refuses plaintext,
// and a running one keeps what its servers do: an upgrade must not cut off
// the clients of a cluster whose servers an earlier release ran without
// client TLS (its template has no mark and no client certificate), so
// those servers serve TLS and keep accepting plaintext until the spec
// says false. The choice lives in the template's mark, so it survives
// the operator's restarts and holds until the spec changes it.
func ClientPlaintext(asked *bool, served ClientTLSServed) bool {
	switch {
	case asked != nil:
		return *asked
	case !served.Found:
		return false
	case served.ServesNoTLS():
		return true
	default:
		return served.Mark == ClientTLSPlaintextAccepted
	}
}
