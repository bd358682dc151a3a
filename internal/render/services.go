package render

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Every port declares its protocol: NATS speaks first, and a mesh sidecar
// that has to sniff an undeclared port waits for the client, which never
// talks first, and hangs.
func port(name string, number int32, appProtocol string) corev1.ServicePort {
	return corev1.ServicePort{
		Name:        name,
		Port:        number,
		TargetPort:  intstr.FromString(name),
		Protocol:    corev1.ProtocolTCP,
		AppProtocol: ptr.To(appProtocol),
	}
}

// ClientService is what clients connect to.
func ClientService(c *v1alpha1.NatsCluster) *corev1.Service {
	spec := c.Spec.Service
	svc := &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: objectMeta(c, c.ClientServiceName()),
		Spec: corev1.ServiceSpec{
			Type:     serviceType(spec.Type),
			Selector: ManagedSelectorLabels(c),
			Ports:    append([]corev1.ServicePort{port("nats", ClientPort, clientAppProtocol(c))}, append(listenerServicePorts(c), topologyServicePorts(c, false)...)...),
		},
	}
	if len(spec.Annotations) > 0 {
		svc.Annotations = maps.Clone(spec.Annotations)
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerClass = spec.LoadBalancerClass
		svc.Spec.LoadBalancerSourceRanges = spec.LoadBalancerSourceRanges
	}
	return svc
}

// serviceType: unset means ClusterIP, never an exposure the user did not ask for.
func serviceType(t v1alpha1.ServiceType) corev1.ServiceType {
	if t == "" {
		return corev1.ServiceTypeClusterIP
	}
	return corev1.ServiceType(t)
}

// HeadlessService gives each server a DNS name for the cluster routes. Its
// addresses are published before the pods are ready: the servers must find
// each other to become ready at all.
func HeadlessService(c *v1alpha1.NatsCluster) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: objectMeta(c, c.HeadlessServiceName()),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 ManagedSelectorLabels(c),
			Ports: []corev1.ServicePort{
				port("nats", ClientPort, clientAppProtocol(c)),
				port("cluster", ClusterPort, routeAppProtocol(c)),
				port("monitor", MonitorPort, monitorAppProtocol(c)),
			},
		},
	}
	svc.Spec.Ports = append(svc.Spec.Ports, topologyServicePorts(c, true)...)
	if c.Spec.MonitoringEnabled() {
		// On the headless Service too: Istio matches only declared ports.
		svc.Spec.Ports = append(svc.Spec.Ports, port(MetricsPortName, MetricsPort, "http"))
	}
	// The listeners too, for the same reason.
	svc.Spec.Ports = append(svc.Spec.Ports, listenerServicePorts(c)...)
	return svc
}

// clientAppProtocol is tcp even with TLS: nats-server says INFO in the
// clear before the client's handshake, so the bytes on the wire start as
// plain TCP. Only a TLS-first listener is TLS from its first byte.
func clientAppProtocol(c *v1alpha1.NatsCluster) string {
	if c.Spec.ClientTLS().HandshakeFirst {
		return "tls"
	}
	return "tcp"
}

// routeAppProtocol: a route with TLS does the handshake before anything
// else, so its port is TLS from the first byte.
func routeAppProtocol(c *v1alpha1.NatsCluster) string {
	if c.Spec.RouteTLSEnabled() {
		return "tls"
	}
	return "tcp"
}

func monitorAppProtocol(c *v1alpha1.NatsCluster) string {
	if c.Spec.MonitorTLSEnabled() {
		return "https"
	}
	return "http"
}
