package render

import (
	"maps"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// WebSocketIngress is the Ingress in front of c's WebSocket port
// (spec.websocket.ingress), nil when not asked for. It routes every path
// of its host to the client Service's websocket port, by the port's name
// so that a port change follows, and always with TLS at the controller.
func WebSocketIngress(c *v1alpha1.NatsCluster) *networkingv1.Ingress {
	if !c.Spec.WebSocketIngressEnabled() {
		return nil
	}
	spec := c.Spec.WebSocket.Ingress
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "Ingress"),
		ObjectMeta: objectMeta(c, c.WebSocketIngressName()),
		Spec: networkingv1.IngressSpec{
			IngressClassName: spec.ClassName,
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{spec.Host}, SecretName: spec.TLSSecretName}},
			Rules: []networkingv1.IngressRule{{
				Host: spec.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: &prefix,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: c.ClientServiceName(),
							Port: networkingv1.ServiceBackendPort{Name: WebSocketPortName},
						}},
					}},
				}},
			}},
		},
	}
	if len(spec.Annotations) > 0 {
		ing.Annotations = maps.Clone(spec.Annotations)
	}
	return ing
}
