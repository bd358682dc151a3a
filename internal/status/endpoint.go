package status

import (
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// Endpoint derives where clients connect. pending is true when an external
// address was asked for (a LoadBalancer) and does not exist yet: that is
// reported as a reason, never as an empty success.
func Endpoint(c *v1alpha1.NatsCluster, svc *corev1.Service) (ep v1alpha1.Endpoint, pending bool) {
	ep.Internal = render.InternalURL(c)
	if override := c.Spec.Service.ExternalEndpoint; override != "" {
		ep.External = override
		return ep, false
	}
	switch c.Spec.Service.Type {
	case v1alpha1.ServiceType(corev1.ServiceTypeLoadBalancer):
		host := loadBalancerHost(svc)
		if host == "" {
			return ep, true
		}
		ep.External = clientURL(c, host, render.ClientPort)
	case v1alpha1.ServiceType(corev1.ServiceTypeNodePort):
		// Any node's address works, and the operator does not read nodes:
		// report the port, which is what a user cannot guess.
		if p := nodePort(svc); p != 0 {
			ep.NodePort = p
		}
	}
	return ep, false
}

func loadBalancerHost(svc *corev1.Service) string {
	if svc == nil {
		return ""
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.Hostname != "" {
			return in.Hostname
		}
		if in.IP != "" {
			return in.IP
		}
	}
	return ""
}

func nodePort(svc *corev1.Service) int32 {
	if svc == nil {
		return 0
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == render.ClientPort {
			return p.NodePort
		}
	}
	return 0
}

// clientURL joins host and port properly, IPv6 literals included, with
// the scheme clients must use (tls:// with client TLS).
func clientURL(c *v1alpha1.NatsCluster, host string, port int) string {
	return fmt.Sprintf("%s://%s", render.ClientScheme, net.JoinHostPort(host, strconv.Itoa(port)))
}
