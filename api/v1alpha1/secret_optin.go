package v1alpha1

// SecretAllowLabel marks a Secret its owner lets kubenats read and use:
// only Secrets labelled `kubenats.io/allow: "true"` (and of type Opaque or
// kubernetes.io/tls) can be named by spec.auth.secretRef, credentialsSecretRef
// or tlsSecretRef. A label, not an annotation: the operator watches exactly
// these Secrets through a label-selected cache, and never lists the others.
// Not a Secret type either: types are immutable, and cert-manager writes
// kubernetes.io/tls Secrets, which can carry the label through its
// secretTemplate.
const (
	SecretAllowLabel = "kubenats.io/allow"
	SecretAllowValue = "true"
)
