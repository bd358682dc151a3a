package render_test

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestWebSocketIngress: asked for, the Ingress routes its host, with the
// named TLS Secret, to the client Service's websocket port by name (a port
// change follows without a new Ingress), in the class and with the
// annotations asked for; not asked for, there is none, and the servers'
// other ports are never routed. Careless variants it catches: a backend on
// the client port 4222 (an Ingress speaking HTTP to NATS), an Ingress
// without TLS, an Ingress rendered whenever WebSocket is on.
func TestWebSocketIngress(t *testing.T) {
	ws := v1alpha1.WebSocketSpec{NoTLS: true, Port: 8081, Ingress: &v1alpha1.WebSocketIngress{
		Host: "nats.example.com", ClassName: ptr.To("public"), TLSSecretName: "nats-example-com",
		Annotations: map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"},
	}}
	c := cluster(withWebSocket(ws))
	objs := renderObjects(t, c, render.Inputs{})
	ing := find[*networkingv1.Ingress](t, objs, c.WebSocketIngressName())
	equal(t, "class", ptr.Deref(ing.Spec.IngressClassName, ""), "public")
	equal(t, "annotation", ing.Annotations["cert-manager.io/cluster-issuer"], "letsencrypt")
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "nats-example-com" || len(ing.Spec.TLS[0].Hosts) != 1 || ing.Spec.TLS[0].Hosts[0] != "nats.example.com" {
		t.Fatalf("tls %+v, want nats.example.com with Secret nats-example-com", ing.Spec.TLS)
	}
	if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "nats.example.com" || ing.Spec.Rules[0].HTTP == nil || len(ing.Spec.Rules[0].HTTP.Paths) != 1 {
		t.Fatalf("rules %+v, want one path on nats.example.com", ing.Spec.Rules)
	}
	path := ing.Spec.Rules[0].HTTP.Paths[0]
	equal(t, "path", path.Path, "/")
	equal(t, "path type", ptr.Deref(path.PathType, ""), networkingv1.PathTypePrefix)
	backend := path.Backend.Service
	if backend == nil || backend.Name != c.ClientServiceName() || backend.Port.Name != render.WebSocketPortName || backend.Port.Number != 0 {
		t.Fatalf("backend %+v, want the client Service's port named websocket", path.Backend)
	}
	if ing.Spec.DefaultBackend != nil {
		t.Fatalf("a default backend %+v routes every host", ing.Spec.DefaultBackend)
	}

	for name, c := range map[string]*v1alpha1.NatsCluster{
		"no websocket":             cluster(),
		"websocket and no ingress": cluster(withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true})),
	} {
		for _, o := range renderObjects(t, c, render.Inputs{}) {
			if _, ok := o.(*networkingv1.Ingress); ok {
				t.Errorf("%s: an Ingress %s", name, o.GetName())
			}
		}
	}
}
