package render

import (
	securityapi "istio.io/api/security/v1beta1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// Port names of the WebSocket and MQTT listeners, on the container and on
// both Services.
const (
	WebSocketPortName = "websocket"
	MQTTPortName      = "mqtt"
)

// Listener is one of the optional client listeners (WebSocket, MQTT) as
// every part of a cluster sees it: nats.conf, the container's and the
// Services' ports, the NetworkPolicy and the mesh policy all read this one
// list, so that a port cannot be open in one and missing in another.
type Listener struct {
	// Name is the port's name.
	Name string
	// Port is the number the servers listen on.
	Port int32
	// AppProtocol is what the port speaks from its first byte: a mesh
	// sidecar must not sniff it. WebSocket is HTTP (https with TLS);
	// MQTT is TCP, or TLS from the first byte.
	AppProtocol string
	// From are the user's peers for the NetworkPolicy, and FromField the
	// field they come from, for errors.
	From      []v1alpha1.NetworkPolicyPeer
	FromField string
	// MeshPermissive asks for a PERMISSIVE port-level mTLS exception.
	MeshPermissive bool
}

// Listeners are c's WebSocket and MQTT listeners, in that order; none when
// neither is asked for.
func Listeners(c *v1alpha1.NatsCluster) []Listener {
	c = c.WithDefaults() // the ports, for callers that did not default c
	var out []Listener
	if ws := c.Spec.WebSocket; ws != nil {
		proto := "http"
		if c.Spec.WebSocketTLS() {
			proto = "https"
		}
		out = append(out, Listener{Name: WebSocketPortName, Port: ws.Port, AppProtocol: proto,
			From: ws.From, FromField: "spec.websocket.from", MeshPermissive: ws.MeshPermissive})
	}
	if m := c.Spec.MQTT; m != nil {
		// Servers that accept plaintext beside TLS (allow_non_tls, which
		// nats-server applies to MQTT too) take either from the first
		// byte: tcp.
		proto := "tcp"
		if c.Spec.MQTTTLS() && !c.Spec.AcceptsPlaintextClients() {
			proto = "tls"
		}
		out = append(out, Listener{Name: MQTTPortName, Port: m.Port, AppProtocol: proto,
			From: m.From, FromField: "spec.mqtt.from", MeshPermissive: m.MeshPermissive})
	}
	return out
}

// listenerPort is the port of c's listener of that name.
func listenerPort(c *v1alpha1.NatsCluster, name string) int32 {
	for _, l := range Listeners(c) {
		if l.Name == name {
			return l.Port
		}
	}
	return 0
}

// webSocketBlock is nats.conf's websocket block, or nil. With
// spec.tls.client it serves the client certificate, with the client's
// verify: the same files, so the reload that serves a renewed client
// certificate serves it here too (nats-server reads a WebSocket
// listener's certificate from its current options at every handshake).
func webSocketBlock(c *v1alpha1.NatsCluster) *natsconf.WebSocket {
	ws := c.Spec.WebSocket
	if ws == nil {
		return nil
	}
	out := &natsconf.WebSocket{Port: int(listenerPort(c, WebSocketPortName)), AllowedOrigins: ws.AllowedOrigins, Compression: ws.Compression}
	if c.Spec.WebSocketTLS() {
		out.TLS = listenerTLS(c)
	} else {
		// Without spec.tls.client only noTLS passes admission; should
		// neither be there (kubenats render of an unchecked file), the
		// model refuses the block: nats-server would not start.
		out.NoTLS = ws.NoTLS
	}
	return out
}

// mqttBlock is nats.conf's mqtt block, or nil; TLS as for WebSocket.
func mqttBlock(c *v1alpha1.NatsCluster) *natsconf.MQTT {
	m := c.Spec.MQTT
	if m == nil {
		return nil
	}
	out := &natsconf.MQTT{Port: int(listenerPort(c, MQTTPortName))}
	if c.Spec.MQTTTLS() {
		out.TLS = listenerTLS(c)
	}
	if m.StreamReplicas != nil {
		out.StreamReplicas = int(*m.StreamReplicas)
	}
	return out
}

// listenerTLS is the client listener's tls for another listener: the same
// certificate and verify, without handshake_first, which only the client
// port knows (WebSocket starts with HTTP or its TLS, MQTT with its TLS).
func listenerTLS(c *v1alpha1.NatsCluster) *natsconf.TLS {
	t := clientTLS(c)
	if t != nil {
		t.HandshakeFirst = false
	}
	return t
}

// withoutReloadableMQTT is m as the restart hash sees it: stream_replicas
// is reloaded by nats-server (reload.go's mqttStreamReplicasReload), so a
// change of it reloads the servers instead of restarting them.
func withoutReloadableMQTT(m *natsconf.MQTT) *natsconf.MQTT {
	if m == nil {
		return nil
	}
	out := *m
	out.StreamReplicas = 0
	return &out
}

// listenerServicePorts are the listeners' ports on a Service.
func listenerServicePorts(c *v1alpha1.NatsCluster) []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, l := range Listeners(c) {
		out = append(out, port(l.Name, l.Port, l.AppProtocol))
	}
	return out
}

// listenerContainerPorts are the listeners' ports on the nats container,
// which the Services target by name.
func listenerContainerPorts(c *v1alpha1.NatsCluster) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, l := range Listeners(c) {
		out = append(out, corev1.ContainerPort{Name: l.Name, ContainerPort: l.Port, Protocol: corev1.ProtocolTCP})
	}
	return out
}

// listenerIngressRules admit to each listener its own peers (from) or,
// unset, the client port's (spec.networkPolicy.clients), never the
// operator, which speaks neither protocol. A listener nobody may reach
// gets no rule at all: a rule with no peers would admit every source.
func listenerIngressRules(c *v1alpha1.NatsCluster, clients []networkingv1.NetworkPolicyPeer) ([]networkingv1.NetworkPolicyIngressRule, error) {
	var out []networkingv1.NetworkPolicyIngressRule
	for _, l := range Listeners(c) {
		peers := clients
		if len(l.From) > 0 {
			var err error
			if peers, err = policyPeers(l.FromField, l.From); err != nil {
				return nil, err
			}
		}
		if len(peers) == 0 {
			continue
		}
		out = append(out, ingressRule(l.Port, peers))
	}
	return out, nil
}

// listenerMeshLevels are the PERMISSIVE port-level exceptions the
// listeners ask for (meshPermissive). Istio's portLevelMtls names the
// container port, which is the listener's.
func listenerMeshLevels(c *v1alpha1.NatsCluster, levels map[uint32]*securityapi.PeerAuthentication_MutualTLS) {
	for _, l := range Listeners(c) {
		if l.MeshPermissive {
			levels[uint32(l.Port)] = &securityapi.PeerAuthentication_MutualTLS{Mode: securityapi.PeerAuthentication_MutualTLS_PERMISSIVE}
		}
	}
}
