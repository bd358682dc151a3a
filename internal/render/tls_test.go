package render_test

import (
	"crypto/tls"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestClientAndMonitorTLSLoadInNatsServer(t *testing.T) {
	got := loadAsServer(t, cluster(withClientTLS("my-tls"), withMonitorTLS()))
	o := got.opts
	if o.TLSConfig == nil {
		t.Fatal("client TLS asked for, nats-server has none")
	}
	equal(t, "client verify", o.TLSVerify, false)
	equal(t, "HTTPSPort", o.HTTPSPort, render.MonitorPort)
	equal(t, "HTTPPort", o.HTTPPort, 0)

	verified := loadAsServer(t, func() *v1alpha1.NatsCluster {
		c := cluster(withClientTLS("my-tls"))
		c.Spec.TLS.Client.Verify, c.Spec.TLS.Client.HandshakeFirst = true, true
		return c
	}()).opts
	if verified.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert || !verified.TLSHandshakeFirst {
		t.Errorf("verify and handshakeFirst: client auth %v, handshake first %v", verified.TLSConfig.ClientAuth, verified.TLSHandshakeFirst)
	}
}

func TestTLSVolumesAndProbes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          *v1alpha1.NatsCluster
		wantSecrets []string
		wantScheme  corev1.URIScheme
	}{
		{"default: the route and client certificates", cluster(), []string{"demo-routes-tls", "demo-client-tls"}, corev1.URISchemeHTTP},
		{"route TLS off: the client certificate alone", cluster(withRouteTLS(false)), []string{"demo-client-tls"}, corev1.URISchemeHTTP},
		{"one server: no routes, no route certificate", cluster(withReplicas(1)), []string{"demo-client-tls"}, corev1.URISchemeHTTP},
		{"the user's route Secret", cluster(func(c *v1alpha1.NatsCluster) { c.Spec.TLS.Routes.SecretName = "mine" }), []string{"mine", "demo-client-tls"}, corev1.URISchemeHTTP},
		{"client TLS and https monitoring", cluster(withClientTLS("client-tls"), withMonitorTLS()), []string{"demo-routes-tls", "client-tls"}, corev1.URISchemeHTTPS},
		{"client TLS from an issuer", cluster(withClientIssuer("ca")), []string{"demo-routes-tls", "demo-client-tls"}, corev1.URISchemeHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := find[*appsv1.StatefulSet](t, renderObjects(t, tc.in, render.Inputs{}), "demo")
			var secrets []string
			for _, v := range sts.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					secrets = append(secrets, v.Secret.SecretName)
				}
			}
			if !slices.Equal(secrets, tc.wantSecrets) {
				t.Errorf("secret volumes %v, want %v", secrets, tc.wantSecrets)
			}
			ctr := serverContainerOf(t, tc.in)
			for _, p := range []*corev1.Probe{ctr.StartupProbe, ctr.ReadinessProbe, ctr.LivenessProbe} {
				equal(t, "probe scheme", p.HTTPGet.Scheme, tc.wantScheme)
			}
		})
	}
}

// TestRouteIssuerIssuesTheClustersOwnCA: with a route issuer, cert-manager
// is asked for a CA of the cluster's own, never for the route certificate
// itself (which would make the issuer's CA the servers' ca_file, and every
// cluster on that issuer a peer: TestRoutesRefuseAnotherCluster in e2e).
// Its key survives renewals, in the form the operator reads.
func TestRouteIssuerIssuesTheClustersOwnCA(t *testing.T) {
	c := cluster(withRouteIssuer("route-ca"))
	objs := renderObjects(t, c, render.Inputs{ClusterDomain: "example.org"})
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetName() == render.LegacyRouteCertificateName(c) {
			t.Fatalf("a route Certificate %s from the issuer itself", u.GetName())
		}
	}
	ca := find[*unstructured.Unstructured](t, objs, "demo-routes-ca")
	spec := ca.Object["spec"].(map[string]any)
	equal(t, "isCA", spec["isCA"], any(true))
	equal(t, "secretName", spec["secretName"], any("demo-routes-ca"))
	equal(t, "commonName", spec["commonName"], any("ns/demo route CA"))
	if _, has := spec["dnsNames"]; has {
		t.Errorf("the route CA asks for DNS names %v", spec["dnsNames"])
	}
	key := spec["privateKey"].(map[string]any)
	equal(t, "rotationPolicy", key["rotationPolicy"], any("Never"))
	equal(t, "encoding", key["encoding"], any("PKCS8"))
	issuer := spec["issuerRef"].(map[string]any)
	equal(t, "issuerRef.name", issuer["name"], any("route-ca"))
	equal(t, "issuerRef.kind", issuer["kind"], any("ClusterIssuer"))
	if usages := spec["usages"].([]any); !slices.Contains(usages, any("cert sign")) {
		t.Errorf("route CA usages %v, want cert sign", usages)
	}
	labels := spec["secretTemplate"].(map[string]any)["labels"].(map[string]any)
	equal(t, "CA secret label", labels[render.LabelInstance], any("demo"))
}

// TestRouteCertificateSecretUnderAnIssuer: the operator writes the route
// certificate it signed with the issued CA, ca.crt that CA alone, and no
// CA Secret of its own (the CA's key stays in cert-manager's Secret).
func TestRouteCertificateSecretUnderAnIssuer(t *testing.T) {
	c := cluster(withRouteIssuer("route-ca")).WithDefaults()
	secrets := render.Secrets(c, render.Credentials{Route: "r", RoutePKI: &render.RoutePKI{CACert: "ca", Cert: "crt", Key: "key"}})
	var routes *corev1.Secret
	for _, s := range secrets {
		switch s.Name {
		case render.CASecretName(c):
			t.Errorf("a CA Secret %s under an issuer", s.Name)
		case render.RouteTLSSecretName(c):
			routes = s
		}
	}
	if routes == nil {
		t.Fatalf("no Secret %s", render.RouteTLSSecretName(c))
	}
	equal(t, "ca.crt", routes.StringData[render.TLSCAKey]+string(routes.Data[render.TLSCAKey]), "ca")
	equal(t, "tls.crt", routes.StringData[render.TLSCertKey]+string(routes.Data[render.TLSCertKey]), "crt")
}

func TestCertificatesCarryTheNamesClientsUse(t *testing.T) {
	c := cluster(withClientIssuer("client-ca"))
	objs := renderObjects(t, c, render.Inputs{ClusterDomain: "example.org"})
	client := find[*unstructured.Unstructured](t, objs, "demo-client")
	for _, tc := range []struct {
		cert   *unstructured.Unstructured
		secret string
		issuer map[string]any
		names  []string
	}{
		{client, "demo-client-tls", map[string]any{"name": "client-ca", "kind": "Issuer", "group": "cert-manager.io"}, []string{
			"demo", "demo.ns", "demo.ns.svc", "demo.ns.svc.example.org",
			"*.demo-headless", "*.demo-headless.ns", "*.demo-headless.ns.svc", "*.demo-headless.ns.svc.example.org"}},
	} {
		spec := tc.cert.Object["spec"].(map[string]any)
		equal(t, tc.cert.GetName()+" secretName", spec["secretName"], any(tc.secret))
		var names []string
		for _, n := range spec["dnsNames"].([]any) {
			names = append(names, n.(string))
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf("%s dnsNames = %v, want %v", tc.cert.GetName(), names, tc.names)
		}
		if _, hasIPs := spec["ipAddresses"]; hasIPs {
			t.Errorf("%s asks for IP SANs: pods change addresses", tc.cert.GetName())
		}
		issuer := spec["issuerRef"].(map[string]any)
		for k, v := range tc.issuer {
			equal(t, tc.cert.GetName()+" issuerRef."+k, issuer[k], v)
		}
		usages := spec["usages"].([]any)
		if !slices.Contains(usages, any("server auth")) || !slices.Contains(usages, any("client auth")) {
			t.Errorf("%s usages %v: both ends of a connection use it", tc.cert.GetName(), usages)
		}
		labels := spec["secretTemplate"].(map[string]any)["labels"].(map[string]any)
		equal(t, tc.cert.GetName()+" secret label", labels[render.LabelManagedBy], any(render.ManagedBy))
	}
}

func TestClientServiceURLsUseTLS(t *testing.T) {
	c := cluster(withClientTLS("x")).WithDefaults()
	equal(t, "InternalURL", render.InternalURL(c), "tls://demo.ns.svc:4222")
}
