package envtest_test

import (
	"fmt"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func withWebSocketIngress(host string) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) {
		s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, Ingress: &v1alpha1.WebSocketIngress{Host: host, TLSSecretName: "nats-tls"}}
	}
}

// TestWebSocketIngressFollowsTheSpec: the operator, with the shipped RBAC,
// creates the Ingress the spec asks for (controlled by the cluster, routed
// to the websocket port), follows a host change, and removes it when the
// spec stops asking, and only it: a user's Ingress with the cluster's
// labels stays. Careless variants it catches: a role without ingresses
// (nothing is created: the apply is forbidden), Ingress left out of the
// optional kinds (the Ingress outlives spec.websocket.ingress).
func TestWebSocketIngressFollowsTheSpec(t *testing.T) {
	ns := namespace(t)
	c := natsCluster(ns, "nats", withWebSocketIngress("nats.example.com"))
	create(t, c)
	key := client.ObjectKey{Namespace: ns, Name: render.WebSocketIngressName(c)}
	hostIs := func(host string) func() error {
		return func() error {
			var ing networkingv1.Ingress
			if err := k8s.Get(ctx(t), key, &ing); err != nil {
				return err
			}
			if ref := metav1.GetControllerOf(&ing); ref == nil || ref.UID != c.UID {
				return fmt.Errorf("controller reference %+v, want NatsCluster %s", ref, c.UID)
			}
			if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != host {
				return fmt.Errorf("rules %+v, want host %s", ing.Spec.Rules, host)
			}
			if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b.Name != render.ClientServiceName(c) || b.Port.Name != render.WebSocketPortName {
				return fmt.Errorf("backend %+v", b)
			}
			return nil
		}
	}
	eventually(t, wait, hostIs("nats.example.com"))
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.WebSocket.Ingress.Host = "ws.example.com" })
	eventually(t, wait, hostIs("ws.example.com"))

	mine := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine", Labels: map[string]string{
			render.LabelInstance: c.Name, render.LabelManagedBy: render.ManagedBy, render.LabelName: "nats",
		}},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
	}
	create(t, mine)
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.WebSocket.Ingress = nil })
	eventually(t, wait, func() error {
		err := k8s.Get(ctx(t), key, &networkingv1.Ingress{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the Ingress is still there (%v)", err)
	})
	waitObserved(t, c)
	get(t, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}})
}
