package render

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// cert-manager's Certificate, written as unstructured: the operator works
// with or without cert-manager installed, and its Go module would pin older
// Kubernetes libraries than ours.
const (
	CertificateAPIVersion = "cert-manager.io/v1"
	CertificateKind       = "Certificate"
)

// DefaultClusterDomain is the DNS suffix of a cluster's Services.
const DefaultClusterDomain = "cluster.local"

// Certificates are the cert-manager Certificates c asks for: the client
// certificate, and the leafnode and gateway ones, each when its listener
// names an issuer. Every one is a leaf (never isCA) for the cluster's own
// Service names only: a tenant picks the issuer, and whatever it is
// asked for, the tenant can read (spec.image reads what is mounted).
func Certificates(c *v1alpha1.NatsCluster, clusterDomain string) []client.Object {
	if clusterDomain == "" {
		clusterDomain = DefaultClusterDomain
	}
	var out []client.Object
	if ct := c.Spec.ClientTLS(); ct.IssuerRef != nil {
		// client auth too: the operator presents it when clients must
		// (verify), so that it needs no certificate of its own.
		out = append(out, certificate(c, c.ClientCertificateName(), c.ClientTLSSecretName(), ct.IssuerRef,
			c.ClientDNSNames(clusterDomain), clusterDomain, "server auth", "client auth"))
	}
	return append(out, topologyCertificates(c, clusterDomain)...)
}

// certificate is a leaf Certificate from issuer for those of dnsNames
// that are the cluster's own (IssuedDNSNames). isCA is written false
// rather than left out: what the operator asks an issuer for is
// explicit, and a reader of the object sees it.
func certificate(c *v1alpha1.NatsCluster, name, secret string, issuer *v1alpha1.IssuerRef, dnsNames []string, clusterDomain string, usages ...string) *unstructured.Unstructured {
	var names []any
	for _, n := range IssuedDNSNames(c, dnsNames, clusterDomain) {
		names = append(names, n)
	}
	use := []any{"digital signature", "key encipherment"}
	for _, u := range usages {
		use = append(use, u)
	}
	labels := map[string]any{}
	for k, v := range objectMeta(c, secret).Labels {
		labels[k] = v
	}
	spec := map[string]any{
		"secretName": secret,
		// Labelled as the operator's own, the Secret lands in its cache and
		// wakes it when cert-manager renews the certificate.
		"secretTemplate": map[string]any{"labels": labels},
		"dnsNames":       names,
		"usages":         use,
		"privateKey":     map[string]any{"algorithm": "ECDSA", "size": int64(256), "rotationPolicy": "Always"},
		"issuerRef":      map[string]any{"name": issuer.Name, "kind": issuer.Kind, "group": issuer.Group},
		"isCA":           false,
	}
	if d := issuer.Duration; d != nil {
		spec["duration"] = d.Duration.String()
	}
	if d := issuer.RenewBefore; d != nil {
		spec["renewBefore"] = d.Duration.String()
	}
	meta := objectMeta(c, name)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": CertificateAPIVersion,
		"kind":       CertificateKind,
		"spec":       spec,
	}}
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	return u
}

// IssuedDNSNames are those of names an issuer may be asked to sign for c:
// the ones inside the cluster's namespace in the cluster's DNS
// (<...>.<namespace>.svc, with or without the cluster domain). A short
// name (nats, *.nats-headless) or one with the namespace alone
// (nats.apps) is not the cluster's own: the first means another
// namespace's Service to a client there, and the second is a public
// domain when the namespace is named as a top-level domain (a cluster
// "example" in namespace "com"), and an issuer that other services trust
// would vouch for it. The operator's own CAs, which nothing but the
// cluster's clients trust, still sign the short names.
func IssuedDNSNames(c *v1alpha1.NatsCluster, names []string, clusterDomain string) []string {
	if clusterDomain == "" {
		clusterDomain = DefaultClusterDomain
	}
	inCluster := "." + c.Namespace + ".svc"
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, inCluster) || strings.HasSuffix(n, inCluster+"."+clusterDomain) {
			out = append(out, n)
		}
	}
	return out
}
