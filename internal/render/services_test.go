package render_test

import (
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func clientServiceOf(t *testing.T, c *v1alpha1.NatsCluster) *corev1.Service {
	t.Helper()
	return find[*corev1.Service](t, renderObjects(t, c, render.Inputs{}), c.Name)
}

func headlessServiceOf(t *testing.T, c *v1alpha1.NatsCluster) *corev1.Service {
	t.Helper()
	return find[*corev1.Service](t, renderObjects(t, c, render.Inputs{}), c.Name+"-headless")
}

func TestClientServiceType(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   v1alpha1.ServiceSpec
		want corev1.ServiceType
	}{
		{"unset means ClusterIP", v1alpha1.ServiceSpec{}, corev1.ServiceTypeClusterIP},
		{"ClusterIP on request", v1alpha1.ServiceSpec{Type: "ClusterIP"}, corev1.ServiceTypeClusterIP},
		{"NodePort on request", v1alpha1.ServiceSpec{Type: "NodePort"}, corev1.ServiceTypeNodePort},
		{"LoadBalancer on request", v1alpha1.ServiceSpec{Type: "LoadBalancer"}, corev1.ServiceTypeLoadBalancer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			equal(t, "type", clientServiceOf(t, cluster(withService(tc.in))).Spec.Type, tc.want)
		})
	}
}

// TestClientServiceLoadBalancerFields checks that the load balancer class and
// source ranges reach the Service with type LoadBalancer only.
func TestClientServiceLoadBalancerFields(t *testing.T) {
	ranges := []string{"10.0.0.0/8", "fd00::/8"}
	for _, tc := range []struct {
		name       string
		typ        v1alpha1.ServiceType
		wantCopied bool
	}{
		{"LoadBalancer", "LoadBalancer", true},
		{"NodePort", "NodePort", false},
		{"ClusterIP", "ClusterIP", false},
		{"unset", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := clientServiceOf(t, cluster(withService(v1alpha1.ServiceSpec{
				Type: tc.typ, LoadBalancerClass: ptr.To("example.com/lb"), LoadBalancerSourceRanges: ranges,
			})))
			gotClass := svc.Spec.LoadBalancerClass != nil && *svc.Spec.LoadBalancerClass == "example.com/lb"
			gotRanges := fmt.Sprint(svc.Spec.LoadBalancerSourceRanges) == fmt.Sprint(ranges)
			equal(t, "loadBalancerClass set", gotClass, tc.wantCopied)
			equal(t, "loadBalancerSourceRanges set", gotRanges, tc.wantCopied)
			if !tc.wantCopied && (svc.Spec.LoadBalancerClass != nil || len(svc.Spec.LoadBalancerSourceRanges) > 0) {
				t.Errorf("type %s carries load balancer fields: %v %v", svc.Spec.Type, svc.Spec.LoadBalancerClass, svc.Spec.LoadBalancerSourceRanges)
			}
		})
	}
}

func TestClientServiceAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]string
		want map[string]string
	}{
		{"none", nil, nil},
		{"copied", map[string]string{"service.beta.kubernetes.io/aws-load-balancer-internal": "true", "x": "y"},
			map[string]string{"service.beta.kubernetes.io/aws-load-balancer-internal": "true", "x": "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := clientServiceOf(t, cluster(withService(v1alpha1.ServiceSpec{Annotations: tc.in})))
			if !maps.Equal(svc.Annotations, tc.want) {
				t.Errorf("annotations = %v, want %v", svc.Annotations, tc.want)
			}
			if hs := headlessServiceOf(t, cluster(withService(v1alpha1.ServiceSpec{Annotations: tc.in}))); len(hs.Annotations) != 0 {
				t.Errorf("the headless Service got the client Service's annotations: %v", hs.Annotations)
			}
		})
	}
}

func TestHeadlessServicePublishesEveryServer(t *testing.T) {
	for _, replicas := range []int32{1, 3} {
		t.Run(fmt.Sprint(replicas), func(t *testing.T) {
			c := cluster(withReplicas(replicas))
			svc := headlessServiceOf(t, c)
			equal(t, "clusterIP", svc.Spec.ClusterIP, corev1.ClusterIPNone)
			equal(t, "publishNotReadyAddresses", svc.Spec.PublishNotReadyAddresses, true)
			if !maps.Equal(svc.Spec.Selector, render.ManagedSelectorLabels(c)) {
				t.Errorf("selector = %v, want %v", svc.Spec.Selector, render.ManagedSelectorLabels(c))
			}
			sts := statefulSetOf(t, c, render.Inputs{})
			equal(t, "StatefulSet serviceName", sts.Spec.ServiceName, svc.Name)
		})
	}
}

func TestServicePorts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		svc       func(*testing.T, *v1alpha1.NatsCluster) *corev1.Service
		wantPorts map[string]int32
	}{
		{"client", clientServiceOf, map[string]int32{"nats": render.ClientPort}},
		{"headless", headlessServiceOf, map[string]int32{"nats": render.ClientPort, "cluster": render.ClusterPort, "monitor": render.MonitorPort}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster()
			svc := tc.svc(t, c)
			if !maps.Equal(svc.Spec.Selector, render.ManagedSelectorLabels(c)) {
				t.Errorf("selector = %v, want %v", svc.Spec.Selector, render.ManagedSelectorLabels(c))
			}
			ctr := serverContainerOf(t, c)
			containerPorts := map[string]int32{}
			for _, p := range ctr.Ports {
				containerPorts[p.Name] = p.ContainerPort
			}
			got := map[string]int32{}
			for _, p := range svc.Spec.Ports {
				got[p.Name] = p.Port
				if p.AppProtocol == nil || *p.AppProtocol == "" {
					t.Errorf("port %s has no appProtocol", p.Name)
				}
				equal(t, "port "+p.Name+" protocol", p.Protocol, corev1.ProtocolTCP)
				// The target names a port of the nats container, with the same number.
				if p.TargetPort.Type != intstr.String {
					t.Errorf("port %s targets %s, want a container port name", p.Name, p.TargetPort.String())
				} else if n, ok := containerPorts[p.TargetPort.StrVal]; !ok || n != p.Port {
					t.Errorf("port %s (%d) targets %q, which the nats container has as %d (present %v)", p.Name, p.Port, p.TargetPort.StrVal, n, ok)
				}
			}
			if !maps.Equal(got, tc.wantPorts) {
				t.Errorf("ports = %v, want %v", got, tc.wantPorts)
			}
		})
	}
}

func TestServicePortsAppProtocol(t *testing.T) {
	// NATS says INFO before a client's TLS handshake (tcp), a route with TLS
	// and a TLS-first listener handshake first (tls).
	tlsFirst := func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "s", HandshakeFirst: true}
	}
	for _, tc := range []struct {
		name, service, port, want string
		in                        *v1alpha1.NatsCluster
	}{
		{"default", "demo", "nats", "tcp", cluster()},
		{"default", "demo-headless", "nats", "tcp", cluster()},
		{"default", "demo-headless", "cluster", "tls", cluster()},
		{"default", "demo-headless", "monitor", "http", cluster()},
		{"route TLS off", "demo-headless", "cluster", "tcp", cluster(withRouteTLS(false))},
		{"client TLS", "demo", "nats", "tcp", cluster(withClientTLS("s"))},
		{"TLS first", "demo", "nats", "tls", cluster(tlsFirst)},
		{"TLS first", "demo-headless", "nats", "tls", cluster(tlsFirst)},
		{"https monitoring", "demo-headless", "monitor", "https", cluster(withClientTLS("s"), withMonitorTLS())},
	} {
		t.Run(tc.name+"/"+tc.service+"/"+tc.port, func(t *testing.T) {
			svc := find[*corev1.Service](t, renderObjects(t, tc.in, render.Inputs{}), tc.service)
			for _, p := range svc.Spec.Ports {
				if p.Name == tc.port {
					equal(t, "appProtocol", ptr.Deref(p.AppProtocol, ""), tc.want)
					return
				}
			}
			t.Errorf("Service %s has no port %s", tc.service, tc.port)
		})
	}
}
