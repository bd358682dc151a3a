package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestListenersRefusedAtAdmission: the API server refuses, with a message
// that says what to do, every spec.websocket and spec.mqtt that nats-server
// would refuse at start or that would open a listener in the clear
// without being asked. Each case names the careless CRD it catches: the
// rule left out, the server then crash-looping (or, for noTLS, a
// plaintext WebSocket nobody asked for).
func TestListenersRefusedAtAdmission(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsClusterSpec
	tlsClient := func(s *spec) { s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "client-tls"} }
	cases := []struct {
		name string
		edit func(*spec)
		want []string
	}{
		{"mqtt-without-jetstream", func(s *spec) {
			s.JetStream.Enabled = ptr.To(false)
			s.MQTT = &v1alpha1.MQTTSpec{}
		}, []string{"mqtt keeps its sessions and retained messages in JetStream: it needs JetStream enabled"}},
		{"mqtt-replicas-above-servers", func(s *spec) {
			s.MQTT = &v1alpha1.MQTTSpec{StreamReplicas: ptr.To[int32](5)}
		}, []string{"mqtt.streamReplicas cannot exceed spec.replicas"}},
		{"mqtt-replicas-zero", func(s *spec) {
			s.MQTT = &v1alpha1.MQTTSpec{StreamReplicas: ptr.To[int32](0)}
		}, []string{"spec.mqtt.streamReplicas", "greater than or equal to 1"}},
		{"ws-on-client-port", func(s *spec) {
			tlsClient(s)
			s.WebSocket = &v1alpha1.WebSocketSpec{Port: 4222}
		}, []string{"websocket.port is taken"}},
		{"mqtt-on-monitor-port", func(s *spec) { s.MQTT = &v1alpha1.MQTTSpec{Port: 8222} }, []string{"mqtt.port is taken"}},
		{"ws-and-mqtt-same-port", func(s *spec) {
			s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, Port: 1883}
			s.MQTT = &v1alpha1.MQTTSpec{}
		}, []string{"websocket.port and mqtt.port must differ"}},
		{"ws-origin-with-path", func(s *spec) {
			s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, AllowedOrigins: []string{"https://app.example.com/login"}}
		}, []string{"spec.websocket.allowedOrigins[0]"}},
		{"ws-origin-without-scheme", func(s *spec) {
			s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, AllowedOrigins: []string{"app.example.com"}}
		}, []string{"spec.websocket.allowedOrigins[0]"}},
		{"ws-from-without-networkpolicy", func(s *spec) {
			s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, From: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8"}}}}
		}, []string{"websocket.from and mqtt.from admit clients through the NetworkPolicy: they need networkPolicy.enabled"}},
		{"ws-ingress-host-with-scheme", func(s *spec) {
			withWebSocketIngress("https://nats.example.com")(s)
		}, []string{"spec.websocket.ingress.host"}},
		{"ws-ingress-without-tls", func(s *spec) {
			withWebSocketIngress("nats.example.com")(s)
			s.WebSocket.Ingress.TLSSecretName = ""
		}, []string{"spec.websocket.ingress.tlsSecretName"}},
		{"ws-ingress-annotations-too-many", func(s *spec) {
			withWebSocketIngress("nats.example.com")(s)
			s.WebSocket.Ingress.Annotations = map[string]string{}
			for i := range 33 {
				s.WebSocket.Ingress.Annotations[fmt.Sprintf("example.com/a%d", i)] = "v"
			}
		}, []string{"spec.websocket.ingress.annotations"}},
		{"mqtt-from-peer-without-selector", func(s *spec) {
			s.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Enabled: true}
			s.MQTT = &v1alpha1.MQTTSpec{From: []v1alpha1.NetworkPolicyPeer{{}}}
		}, []string{"a peer needs namespaceSelector, podSelector or ipBlock"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := natsCluster(ns, tc.name, tc.edit)
			err := k8s.Create(ctx(t), c)
			if err == nil {
				_ = k8s.Delete(ctx(t), c)
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}

// TestListenersAcceptedAndDefaulted: the specs the docs show are accepted,
// and the API server defaults them as WithDefaults (kubenats render) does.
func TestListenersAcceptedAndDefaulted(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsClusterSpec
	cases := []struct {
		name string
		edit func(*spec)
	}{
		{"both-with-client-tls", func(s *spec) {
			s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "client-tls"}
			s.WebSocket = &v1alpha1.WebSocketSpec{AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000"}, Compression: true}
			s.MQTT = &v1alpha1.MQTTSpec{StreamReplicas: ptr.To[int32](3)}
		}},
		{"ws-behind-proxy-mqtt-plain", func(s *spec) {
			s.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Enabled: true}
			s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, Port: 8443, MeshPermissive: true}
			s.MQTT = &v1alpha1.MQTTSpec{Port: 11883, From: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24"}}}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent := natsCluster(ns, tc.name, tc.edit)
			want := (&v1alpha1.NatsCluster{Spec: *sent.Spec.DeepCopy()}).WithDefaults().Spec
			if err := k8s.Create(ctx(t), sent.DeepCopy()); err != nil {
				t.Fatalf("refused: %v", err)
			}
			got := &v1alpha1.NatsCluster{}
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sent), got); err != nil {
				t.Fatal(err)
			}
			// The listeners' fields only: networkPolicy.operator is defaulted
			// by the API server and read through NamespaceOrDefault by render.
			if !equality.Semantic.DeepEqual(got.Spec.WebSocket, want.WebSocket) || !equality.Semantic.DeepEqual(got.Spec.MQTT, want.MQTT) {
				t.Errorf("the API server's defaults and WithDefaults disagree\nAPI server:   %s %s\nWithDefaults: %s %s",
					asJSON(t, got.Spec.WebSocket), asJSON(t, got.Spec.MQTT), asJSON(t, want.WebSocket), asJSON(t, want.MQTT))
			}
			_ = k8s.Delete(ctx(t), got)
		})
	}
}

// TestListenerOriginNatsServerCannotParseIsReported: an origin admission's
// pattern lets through but nats-server cannot use (a port beyond 65535)
// is reported as ConfigInvalid with an event, and nothing is applied: no
// server ever sees the file. The careless operator, one that rendered the
// origin unchecked, would leave every server crash-looping on "unable to
// parse allowed origin".
func TestListenerOriginNatsServerCannotParseIsReported(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true, AllowedOrigins: []string{"https://app.example.com:70000"}}
	})
	create(t, c)
	c = readyCondition(t, c, metav1.ConditionFalse, "ConfigInvalid")
	if msg := c.Status.Conditions[0].Message; !strings.Contains(msg, "https://app.example.com:70000") || !strings.Contains(msg, "invalid port") {
		t.Fatalf("message %q does not name the origin and what is wrong", msg)
	}
	eventually(t, wait, func() error { return eventWithReason(t, ns, "ConfigInvalid") })
	err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats"}, &appsv1.StatefulSet{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("StatefulSet lookup = %v, want NotFound: no server may get the file", err)
	}
}
