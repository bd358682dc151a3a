package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natscluster"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// The Ingress allow-lists of this suite's operator (main_test.go).
const (
	allowedIngressHosts       = "*.example.com"
	allowedIngressAnnotations = "nginx.ingress.kubernetes.io/proxy-*"
)

func withWebSocketIngress(host string) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) {
		s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, Ingress: &v1alpha1.WebSocketIngress{Host: host, TLSSecretName: "nats-tls"}}
	}
}

// ingressSecret creates the Ingress's TLS Secret nats-tls in ns, opted in
// for kubenats when optIn.
func ingressSecret(t *testing.T, ns string, optIn bool) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: nil, corev1.TLSPrivateKeyKey: nil}}
	if optIn {
		s.Labels = map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}
	}
	create(t, s)
	return s
}

// TestWebSocketIngressFollowsTheSpec: the operator, with the shipped RBAC,
// creates the Ingress the spec asks for (controlled by the cluster, routed
// to the websocket port), follows a host change, and removes it when the
// spec stops asking, and only it: a user's Ingress with the cluster's
// labels stays. Careless variants it catches: a role without ingresses
// (nothing is created: the apply is forbidden), Ingress left out of the
// optional kinds (the Ingress outlives spec.websocket.ingress).
func TestWebSocketIngressFollowsTheSpec(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ingressSecret(t, ns, true)
	c := natsCluster(ns, "nats", withWebSocketIngress("nats.example.com"))
	create(t, c)
	key := client.ObjectKey{Namespace: ns, Name: c.WebSocketIngressName()}
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
			if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b.Name != c.ClientServiceName() || b.Port.Name != render.WebSocketPortName {
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

// TestWebSocketIngressHeldToThePlatformsAllowLists: an Ingress whose host
// or an annotation the operator's allow-lists do not list, or whose TLS
// Secret is not opted in, stops the pass before anything is applied: the
// reason and the field in Ready and in an event, and neither Ingress nor
// StatefulSet over a window. Labelling the Secret afterwards brings the
// Ingress, with its allowed annotation. Careless variants caught (run):
// the checks made after the apply, or not at all (the Ingress exists,
// serving an unlabelled Secret or carrying a configuration snippet);
// annotations allowed unless listed otherwise (the snippet passes); the
// Secret left out of the clusters' Secret index (the label is never
// noticed: the refused pass is not retried by itself).
func TestWebSocketIngressHeldToThePlatformsAllowLists(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, host  string
		annotations map[string]string
		optIn       bool
		reason      string
		field       string
	}{
		{"host", "nats.example.org", nil, true, natscluster.ReasonIngressNotAllowed, "spec.websocket.ingress.host"},
		{"deeper-host", "a.nats.example.com", nil, true, natscluster.ReasonIngressNotAllowed, "spec.websocket.ingress.host"},
		{"snippet", "nats.example.com", map[string]string{
			"nginx.ingress.kubernetes.io/proxy-read-timeout":    "3600",
			"nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers x;",
		}, true, natscluster.ReasonIngressNotAllowed, "nginx.ingress.kubernetes.io/configuration-snippet"},
		{"secret", "nats.example.com", map[string]string{"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600"}, false,
			v1alpha1.ReasonSecretNotFound, "spec.websocket.ingress.tlsSecretName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			secret := ingressSecret(t, ns, tc.optIn)
			c := natsCluster(ns, "nats", withWebSocketIngress(tc.host), func(s *v1alpha1.NatsClusterSpec) {
				s.WebSocket.Ingress.Annotations = tc.annotations
			})
			create(t, c)
			readyCondition(t, c, metav1.ConditionFalse, tc.reason)
			if _, _, msg := readyMessage(t, c); !strings.Contains(msg, tc.field) {
				t.Errorf("Ready's message %q does not name %s", msg, tc.field)
			}
			eventually(t, wait, func() error { return eventAbout(t, c, tc.reason, tc.field) })
			poll.Holds(t, 3*time.Second, func() error {
				for _, obj := range []client.Object{&networkingv1.Ingress{}, &appsv1.StatefulSet{}} {
					name := c.WebSocketIngressName()
					if _, ok := obj.(*appsv1.StatefulSet); ok {
						name = c.StatefulSetName()
					}
					if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
						return fmt.Errorf("the refused cluster's %T %s: %v (want not found)", obj, name, err)
					}
				}
				return nil
			})
			if tc.reason != v1alpha1.ReasonSecretNotFound {
				return
			}
			update(t, secret, func(s *corev1.Secret) {
				s.Labels = map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}
			})
			eventually(t, wait, func() error {
				var ing networkingv1.Ingress
				if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: c.WebSocketIngressName()}, &ing); err != nil {
					return err
				}
				if ing.Annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] != "3600" || ing.Spec.TLS[0].SecretName != "nats-tls" {
					return fmt.Errorf("Ingress annotations %v, TLS %+v", ing.Annotations, ing.Spec.TLS)
				}
				return nil
			})
		})
	}
}
