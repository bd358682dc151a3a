package render_test

import (
	"crypto/tls"
	"slices"
	"strings"
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

// TestARouteIssuerIsNeverAsked: a cluster that still names a route issuer
// (stored before admission refused the field) asks cert-manager for
// nothing on the routes, neither a route CA nor a route certificate:
// the operator keeps the route CA itself, in <name>-ca with its key, and
// writes the route certificate. Careless variant caught (run): the
// release before, which asked the tenant's issuer for an isCA route CA
// (<name>-routes-ca), a sub-CA of the issuer's CA in the tenant's hands;
// the test failed on "a Certificate demo-routes-ca".
func TestARouteIssuerIsNeverAsked(t *testing.T) {
	c := cluster(withRouteIssuer("platform-ca"))
	for _, o := range renderObjects(t, c, render.Inputs{ClusterDomain: "example.org"}) {
		if o.GetObjectKind().GroupVersionKind().Kind == render.CertificateKind {
			t.Errorf("a Certificate %s for a cluster whose only issuer is the route issuer", o.GetName())
		}
	}
	d := c.WithDefaults()
	if !d.GeneratesRoutePKI() || !d.IgnoresRouteIssuer() {
		t.Fatalf("GeneratesRoutePKI %v, IgnoresRouteIssuer %v: the route CA must be the operator's own, and the issuer reported ignored",
			d.GeneratesRoutePKI(), d.IgnoresRouteIssuer())
	}
	secrets := render.Secrets(d, render.Credentials{Route: "r", RoutePKI: &render.RoutePKI{CACert: "ca", CAKey: "ca-key", Cert: "crt", Key: "key"}})
	byName := map[string]*corev1.Secret{}
	for _, s := range secrets {
		byName[s.Name] = s
	}
	if ca := byName[d.CASecretName()]; ca == nil || ca.StringData[render.TLSKeyKey] != "ca-key" {
		t.Errorf("no Secret %s with the operator's own route CA key", d.CASecretName())
	}
	if routes := byName[d.RouteTLSSecretName()]; routes == nil || routes.StringData[render.TLSCAKey] != "ca" {
		t.Errorf("no Secret %s trusting the operator's route CA", d.RouteTLSSecretName())
	}
}

// TestEveryCertificateIsALeafForTheClustersOwnNames renders a cluster
// that names an issuer in every field there is (client, leafnodes,
// gateway, and the ignored routes one), named "example" in a namespace
// named "com", and checks every Certificate it asks for: a leaf (isCA
// written false, no certificate-signing usage), no subject, IP, URI or
// e-mail the issuer would vouch for, and DNS names only inside the
// cluster's namespace in the cluster's DNS. A short name (example) or one
// with the namespace alone (example.com) would be a public domain or
// another namespace's Service to whoever trusts the issuer. Careless
// variants caught (run): the route CA Certificate of the release before
// (isCA true, cert sign); the names as the operator's own CA signs them
// (ClientDNSNames unfiltered: "example.com" asked of the issuer).
func TestEveryCertificateIsALeafForTheClustersOwnNames(t *testing.T) {
	issuer := &v1alpha1.IssuerRef{Name: "platform-ca", Kind: "ClusterIssuer"}
	gw := gateway
	gw.TLS = v1alpha1.GatewayTLSSpec{IssuerRef: issuer}
	leaf := v1alpha1.LeafnodeAcceptSpec{TLS: &v1alpha1.ClientTLSSpec{IssuerRef: issuer}}
	c := cluster(named("example"), func(c *v1alpha1.NatsCluster) {
		c.Namespace = "com"
		c.Spec.TLS.Routes.IssuerRef = issuer
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: issuer}
	}, withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &leaf}), withGateway(gw))
	var seen []string
	for _, domain := range []string{"", "example.org"} {
		for _, o := range renderObjects(t, c, render.Inputs{ClusterDomain: domain}) {
			u, ok := o.(*unstructured.Unstructured)
			if !ok || u.GetKind() != render.CertificateKind {
				continue
			}
			seen = append(seen, u.GetName())
			spec := u.Object["spec"].(map[string]any)
			if isCA, set := spec["isCA"]; !set || isCA != false {
				t.Errorf("%s: isCA %v (set %v), want false written", u.GetName(), isCA, set)
			}
			for _, usage := range spec["usages"].([]any) {
				if usage == "cert sign" || usage == "crl sign" {
					t.Errorf("%s asks for usage %q: a CA's", u.GetName(), usage)
				}
			}
			for _, field := range []string{"commonName", "subject", "ipAddresses", "uris", "emailAddresses", "otherNames"} {
				if v, set := spec[field]; set {
					t.Errorf("%s asks for %s %v", u.GetName(), field, v)
				}
			}
			names, _ := spec["dnsNames"].([]any)
			if len(names) == 0 {
				t.Errorf("%s asks for no DNS name", u.GetName())
			}
			suffix := ".svc." + domain
			if domain == "" {
				suffix = ".svc." + render.DefaultClusterDomain
			}
			for _, n := range names {
				name := n.(string)
				if !strings.HasSuffix(name, ".com.svc") && !strings.HasSuffix(name, ".com"+suffix) {
					t.Errorf("%s asks for %q, which is not inside namespace com in the cluster's DNS", u.GetName(), name)
				}
			}
		}
	}
	slices.Sort(seen)
	want := []string{"example-client", "example-client", "example-gateway", "example-gateway", "example-leafnodes", "example-leafnodes"}
	if !slices.Equal(seen, want) {
		t.Errorf("Certificates %v, want %v: one per listener that names an issuer, none for the routes", seen, want)
	}
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
			"demo.ns.svc", "demo.ns.svc.example.org", "*.demo-headless.ns.svc", "*.demo-headless.ns.svc.example.org"}},
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
