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

// RouteCACertificateName and ClientCertificateName are the Certificates
// the operator asks cert-manager for.
func RouteCACertificateName(c *v1alpha1.NatsCluster) string { return c.Name + "-routes-ca" }
func ClientCertificateName(c *v1alpha1.NatsCluster) string  { return c.Name + "-client" }

// LegacyRouteCertificateName is the route Certificate kubenats asked an
// issuer for before it asked for a route CA (SignsRouteCertificate); the
// controller deletes it, or cert-manager would keep rewriting the Secret
// the operator now writes.
func LegacyRouteCertificateName(c *v1alpha1.NatsCluster) string { return c.Name + "-routes" }

// Certificates are the cert-manager Certificates c asks for: the route CA
// when the routes name an issuer, and the client certificate when the
// client listener does.
func Certificates(c *v1alpha1.NatsCluster, clusterDomain string) []client.Object {
	if clusterDomain == "" {
		clusterDomain = DefaultClusterDomain
	}
	var out []client.Object
	if IssuesRouteCA(c) && HasRoutes(c) {
		out = append(out, routeCACertificate(c))
	}
	if ct := c.Spec.ClientTLS(); ct.IssuerRef != nil {
		// client auth too: the operator presents it when clients must
		// (verify), so that it needs no certificate of its own.
		out = append(out, certificate(c, ClientCertificateName(c), ClientTLSSecretName(c), ct.IssuerRef,
			ClientDNSNames(c, clusterDomain), "server auth", "client auth"))
	}
	return append(out, topologyCertificates(c, clusterDomain)...)
}

// routeCACertificate is the cluster's own route CA, from the issuer the
// routes name. Its key is kept across renewals (rotationPolicy Never):
// a renewed CA then still verifies the route certificates signed before,
// and the servers, which reload at different moments, never stop
// trusting each other.
func routeCACertificate(c *v1alpha1.NatsCluster) *unstructured.Unstructured {
	u := certificate(c, RouteCACertificateName(c), RouteCASecretName(c), c.Spec.TLS.Routes.IssuerRef, nil, "cert sign", "crl sign")
	spec := u.Object["spec"].(map[string]any)
	delete(spec, "dnsNames")
	spec["isCA"] = true
	spec["commonName"] = c.Namespace + "/" + c.Name + " route CA"
	key := spec["privateKey"].(map[string]any)
	// PKCS8: the form the operator reads a CA key in (pki).
	key["rotationPolicy"], key["encoding"] = "Never", "PKCS8"
	return u
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
