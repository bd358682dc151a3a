package render

import (
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

// RouteCertificateName and ClientCertificateName are the Certificates the
// operator asks cert-manager for.
func RouteCertificateName(c *v1alpha1.NatsCluster) string  { return c.Name + "-routes" }
func ClientCertificateName(c *v1alpha1.NatsCluster) string { return c.Name + "-client" }

// Certificates are the cert-manager Certificates c asks for: one per
// listener whose TLS names an issuer.
func Certificates(c *v1alpha1.NatsCluster, clusterDomain string) []client.Object {
	if clusterDomain == "" {
		clusterDomain = DefaultClusterDomain
	}
	var out []client.Object
	if r := c.Spec.TLS.Routes; c.Spec.RouteTLSEnabled() && r.IssuerRef != nil && HasRoutes(c) {
		// Routes dial and accept: the certificate serves both ends.
		out = append(out, certificate(c, RouteCertificateName(c), RouteTLSSecretName(c), r.IssuerRef,
			RouteDNSNames(c, clusterDomain), "server auth", "client auth"))
	}
	if ct := c.Spec.TLS.Client; ct != nil && ct.IssuerRef != nil {
		// client auth too: the operator presents it when clients must
		// (verify), so that it needs no certificate of its own.
		out = append(out, certificate(c, ClientCertificateName(c), ClientTLSSecretName(c), ct.IssuerRef,
			ClientDNSNames(c, clusterDomain), "server auth", "client auth"))
	}
	return out
}

func certificate(c *v1alpha1.NatsCluster, name, secret string, issuer *v1alpha1.IssuerRef, dnsNames []string, usages ...string) *unstructured.Unstructured {
	names := make([]any, len(dnsNames))
	for i, n := range dnsNames {
		names[i] = n
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
