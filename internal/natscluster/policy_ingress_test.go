package natscluster

import (
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestIngressPolicyHosts: no list allows any host; a given list, even
// empty, is all that is allowed; "*.<domain>" allows exactly one label
// under the domain. Careless variants caught: a suffix match
// (HasSuffix(host, domain): "evilexample.com" and "a.b.example.com"
// pass), a wildcard that also allows the bare domain, and an empty list
// read as no policy.
func TestIngressPolicyHosts(t *testing.T) {
	for _, tc := range []struct {
		hosts *[]string
		host  string
		want  bool
	}{
		{nil, "anything.example.org", true},
		{&[]string{}, "nats.example.com", false},
		{&[]string{"nats.example.com"}, "nats.example.com", true},
		{&[]string{"nats.example.com"}, "ws.nats.example.com", false},
		{&[]string{"nats.example.com"}, "nats.example.com.evil.org", false},
		{&[]string{"*.apps.example.com"}, "nats.apps.example.com", true},
		{&[]string{"*.apps.example.com"}, "NATS.apps.example.com", true},
		{&[]string{"*.apps.example.com"}, "apps.example.com", false},
		{&[]string{"*.apps.example.com"}, "a.b.apps.example.com", false},
		{&[]string{"*.apps.example.com"}, "natsapps.example.com", false},
		{&[]string{"*.apps.example.com"}, "nats.evilapps.example.com", false},
		{&[]string{" *.Apps.example.com ", ""}, "nats.apps.example.com", true},
	} {
		p, err := ParseIngressPolicy(tc.hosts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.AllowsHost(tc.host); got != tc.want {
			t.Errorf("hosts %v allow %q: %v, want %v", tc.hosts, tc.host, got, tc.want)
		}
	}
	for _, bad := range []string{"https://nats.example.com", "*", "a.*.example.com", "nats_example.com"} {
		if _, err := ParseIngressPolicy(&[]string{bad}, nil); err == nil {
			t.Errorf("host entry %q accepted", bad)
		}
	}
}

// TestIngressPolicyAnnotations: no list allows no annotation; an exact key
// allows that key only; a trailing "*" allows the keys it prefixes.
// Careless variants caught: an empty list read as "any" (the insecure
// default), and prefix matching of exact entries
// ("nginx.ingress.kubernetes.io/proxy-read-timeout" would let
// "...-timeoutX" through, and "nginx.ingress.kubernetes.io/" every
// snippet).
func TestIngressPolicyAnnotations(t *testing.T) {
	const snippet = "nginx.ingress.kubernetes.io/configuration-snippet"
	for _, tc := range []struct {
		allowed []string
		key     string
		want    bool
	}{
		{nil, "nginx.ingress.kubernetes.io/proxy-read-timeout", false},
		{nil, "cert-manager.io/cluster-issuer", false},
		{[]string{"nginx.ingress.kubernetes.io/proxy-read-timeout"}, "nginx.ingress.kubernetes.io/proxy-read-timeout", true},
		{[]string{"nginx.ingress.kubernetes.io/proxy-read-timeout"}, "nginx.ingress.kubernetes.io/proxy-read-timeoutX", false},
		{[]string{"nginx.ingress.kubernetes.io/"}, snippet, false},
		{[]string{"nginx.ingress.kubernetes.io/proxy-*"}, "nginx.ingress.kubernetes.io/proxy-send-timeout", true},
		{[]string{"nginx.ingress.kubernetes.io/proxy-*"}, snippet, false},
		{[]string{"*"}, snippet, true},
	} {
		p, err := ParseIngressPolicy(nil, tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.AllowsAnnotation(tc.key); got != tc.want {
			t.Errorf("annotations %v allow %q: %v, want %v", tc.allowed, tc.key, got, tc.want)
		}
	}
	if _, err := ParseIngressPolicy(nil, []string{"nginx.*/proxy"}); err == nil {
		t.Error("an inner * accepted")
	}
}

// TestIngressPolicyRefusal: a cluster without an Ingress is never refused;
// one whose host or any annotation is not allowed is, naming the field and
// the flag. Careless variant caught: checking the host alone (the
// cert-manager issuer annotation, past --allowed-cluster-issuers, passes).
func TestIngressPolicyRefusal(t *testing.T) {
	p, err := ParseIngressPolicy(&[]string{"*.apps.example.com"}, []string{"nginx.ingress.kubernetes.io/proxy-*"})
	if err != nil {
		t.Fatal(err)
	}
	cluster := func(host string, annotations map[string]string) *v1alpha1.NatsCluster {
		c := &v1alpha1.NatsCluster{}
		c.Spec.WebSocket = &v1alpha1.WebSocketSpec{Ingress: &v1alpha1.WebSocketIngress{Host: host, TLSSecretName: "tls", Annotations: annotations}}
		return c
	}
	if b := p.refusal(&v1alpha1.NatsCluster{}); b != nil {
		t.Errorf("no Ingress refused: %+v", b)
	}
	if b := p.refusal(cluster("nats.apps.example.com", map[string]string{"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600"})); b != nil {
		t.Errorf("allowed Ingress refused: %+v", b)
	}
	for _, tc := range []struct {
		c    *v1alpha1.NatsCluster
		want []string
	}{
		{cluster("bank.example.com", nil), []string{"spec.websocket.ingress.host", "bank.example.com", "--allowed-ingress-hosts"}},
		{cluster("nats.apps.example.com", map[string]string{
			"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600",
			"cert-manager.io/cluster-issuer":                 "platform-ca",
		}), []string{"spec.websocket.ingress.annotations", "cert-manager.io/cluster-issuer", "--allowed-ingress-annotations"}},
	} {
		b := p.refusal(tc.c)
		if b == nil || b.Reason != ReasonIngressNotAllowed || !b.Fatal {
			t.Errorf("%+v: blocker %+v, want fatal %s", tc.c.Spec.WebSocket.Ingress, b, ReasonIngressNotAllowed)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(b.Message, w) {
				t.Errorf("message %q does not name %q", b.Message, w)
			}
		}
	}
}
