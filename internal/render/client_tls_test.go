package render_test

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
)

// TestClientTLSByDefault: a cluster that says nothing of client TLS
// serves it from the certificate the operator keeps, refuses plaintext,
// and hands clients tls:// and the CA; allowPlaintext adds allow_non_tls,
// which restarts the servers (nats-server cannot reload it), and marks the
// pods so that the choice is kept. Careless variants this fails: the
// default served in plaintext, allow_non_tls left out of the restart hash
// (servers told to reload a change they refuse), the mark left out.
func TestClientTLSByDefault(t *testing.T) {
	c := cluster()
	o := loadAsServer(t, c).opts
	if o.TLSConfig == nil || o.AllowNonTLS {
		t.Fatalf("default: client TLS %v, allow_non_tls %v; want TLS, plaintext refused", o.TLSConfig != nil, o.AllowNonTLS)
	}
	plain := cluster(withPlaintextClients())
	if o := loadAsServer(t, plain).opts; o.TLSConfig == nil || !o.AllowNonTLS {
		t.Fatalf("allowPlaintext: client TLS %v, allow_non_tls %v; want both", o.TLSConfig != nil, o.AllowNonTLS)
	}
	strict, err := render.Conf(c)
	if err != nil {
		t.Fatal(err)
	}
	loose, err := render.Conf(plain)
	if err != nil {
		t.Fatal(err)
	}
	if strict.RestartHash == loose.RestartHash {
		t.Error("allowPlaintext leaves the restart hash alone: nats-server cannot reload allow_non_tls")
	}
	for _, tc := range []struct {
		c    *v1alpha1.NatsCluster
		want string
	}{{c, plan.ClientTLSRequired}, {plain, plan.ClientTLSPlaintextAccepted}} {
		sts := find[*appsv1.StatefulSet](t, renderObjects(t, tc.c, render.Inputs{}), "demo")
		equal(t, "pod mark", sts.Spec.Template.Annotations[render.AnnotationClientTLS], tc.want)
	}
	// handshakeFirst refuses what allowPlaintext would accept; admission
	// refuses both at once, and render never writes them together.
	both := cluster(func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{HandshakeFirst: true, AllowPlaintext: ptr.To(true)}
	})
	if o := loadAsServer(t, both).opts; o.AllowNonTLS {
		t.Error("allow_non_tls written beside handshake_first")
	}
}

// TestGeneratedClientPKISecrets: the operator's client CA stays in its own
// Secret (no pod mounts it), the certificate's Secret carries the CA as
// ca.crt, and clients get the CA in the credentials Secret; with the
// user's own Secret, or cert-manager's, the operator writes neither.
func TestGeneratedClientPKISecrets(t *testing.T) {
	now := time.Now()
	ca, err := pki.NewCA("test client CA", now, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.Issue(ca, cluster().ClientDNSNames(render.DefaultClusterDomain), now, pki.CertValidity)
	if err != nil {
		t.Fatal(err)
	}
	cred := render.Credentials{Client: "c", System: "s", Route: "r", ClientPKI: &render.ClientPKI{CA: ca, Cert: cert}, ClientCA: ca.Cert}
	got := secretData(render.Secrets(cluster(), cred))
	if want := map[string]string{"tls.crt": ca.Cert, "tls.key": ca.Key}; !reflect.DeepEqual(got["demo-client-ca"], want) {
		t.Errorf("CA Secret keys %v, want tls.crt and tls.key of the CA", keys(got["demo-client-ca"]))
	}
	if want := map[string]string{"tls.crt": cert.Cert, "tls.key": cert.Key, "ca.crt": ca.Cert}; !reflect.DeepEqual(got["demo-client-tls"], want) {
		t.Errorf("certificate Secret keys %v, want the certificate, its key and the CA", keys(got["demo-client-tls"]))
	}
	equal(t, "credentials ca.crt", got["demo-client"]["ca.crt"], ca.Cert)
	equal(t, "credentials servers", got["demo-client"]["servers"], "tls://demo.ns.svc:4222")

	sts := find[*appsv1.StatefulSet](t, renderObjects(t, cluster(), render.Inputs{}), "demo")
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "demo-client-ca" {
			t.Error("the pods mount the client CA's key")
		}
	}
	for _, c := range []*v1alpha1.NatsCluster{cluster(withClientTLS("mine")), cluster(withClientIssuer("ca"))} {
		got := secretData(render.Secrets(c, cred))
		if _, ok := got["demo-client-ca"]; ok {
			t.Errorf("%s: the operator writes a client CA beside the user's certificate", c.Spec.ClientTLS().SecretName)
		}
	}
}

func secretData(secrets []*corev1.Secret) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, s := range secrets {
		out[s.Name] = s.StringData
	}
	return out
}
