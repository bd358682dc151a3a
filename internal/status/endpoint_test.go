package status

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// clientService is a client Service of the given type with the given ports
// and load balancer ingress entries.
func clientService(typ corev1.ServiceType, ports []corev1.ServicePort, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"},
		Spec:       corev1.ServiceSpec{Type: typ, Ports: ports},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}},
	}
}

func TestEndpoint(t *testing.T) {
	const internal = "tls://orders.shop.svc:4222"
	withOverride := func(url string) func(*v1alpha1.NatsCluster) {
		return func(c *v1alpha1.NatsCluster) { c.Spec.Service.ExternalEndpoint = url }
	}
	natsPorts := []corev1.ServicePort{
		{Name: "monitor", Port: 8222, NodePort: 30822},
		{Name: "nats", Port: 4222, NodePort: 30422},
		{Name: "cluster", Port: 6222, NodePort: 30622},
	}
	for _, tc := range []struct {
		name        string
		cluster     *v1alpha1.NatsCluster
		svc         *corev1.Service
		want        v1alpha1.Endpoint
		wantPending bool
	}{
		{
			name:    "ClusterIP by default: internal only, not pending",
			cluster: natsCluster(3),
			svc:     clientService(corev1.ServiceTypeClusterIP, natsPorts),
			want:    v1alpha1.Endpoint{Internal: internal},
		},
		{
			name:    "ClusterIP without a live Service: internal only, not pending",
			cluster: natsCluster(3, withServiceType("ClusterIP")),
			want:    v1alpha1.Endpoint{Internal: internal},
		},
		{
			name:    "external endpoint override on ClusterIP",
			cluster: natsCluster(3, withOverride("tls://nats.example.com:443")),
			svc:     clientService(corev1.ServiceTypeClusterIP, natsPorts),
			want:    v1alpha1.Endpoint{Internal: internal, External: "tls://nats.example.com:443"},
		},
		{
			name:    "external endpoint override wins over a LoadBalancer address",
			cluster: natsCluster(3, withServiceType("LoadBalancer"), withOverride("nats://proxy.example.com:4222")),
			svc:     clientService(corev1.ServiceTypeLoadBalancer, natsPorts, corev1.LoadBalancerIngress{IP: "203.0.113.7"}),
			want:    v1alpha1.Endpoint{Internal: internal, External: "nats://proxy.example.com:4222"},
		},
		{
			name:    "external endpoint override is never pending, even on a LoadBalancer without address",
			cluster: natsCluster(3, withServiceType("LoadBalancer"), withOverride("nats://proxy.example.com:4222")),
			svc:     clientService(corev1.ServiceTypeLoadBalancer, natsPorts),
			want:    v1alpha1.Endpoint{Internal: internal, External: "nats://proxy.example.com:4222"},
		},
		{
			name:    "external endpoint override is never pending, even without a live Service",
			cluster: natsCluster(3, withServiceType("LoadBalancer"), withOverride("nats://proxy.example.com:4222")),
			want:    v1alpha1.Endpoint{Internal: internal, External: "nats://proxy.example.com:4222"},
		},
		{
			name:        "LoadBalancer without ingress is pending with no external URL",
			cluster:     natsCluster(3, withServiceType("LoadBalancer")),
			svc:         clientService(corev1.ServiceTypeLoadBalancer, natsPorts),
			want:        v1alpha1.Endpoint{Internal: internal},
			wantPending: true,
		},
		{
			name:        "LoadBalancer with only empty ingress entries is pending",
			cluster:     natsCluster(3, withServiceType("LoadBalancer")),
			svc:         clientService(corev1.ServiceTypeLoadBalancer, natsPorts, corev1.LoadBalancerIngress{}),
			want:        v1alpha1.Endpoint{Internal: internal},
			wantPending: true,
		},
		{
			name:        "LoadBalancer without a live Service is pending",
			cluster:     natsCluster(3, withServiceType("LoadBalancer")),
			want:        v1alpha1.Endpoint{Internal: internal},
			wantPending: true,
		},
		{
			name:    "LoadBalancer with an IPv4 address",
			cluster: natsCluster(3, withServiceType("LoadBalancer")),
			svc:     clientService(corev1.ServiceTypeLoadBalancer, natsPorts, corev1.LoadBalancerIngress{IP: "203.0.113.7"}),
			want:    v1alpha1.Endpoint{Internal: internal, External: "tls://203.0.113.7:4222"},
		},
		{
			name:    "LoadBalancer with a hostname",
			cluster: natsCluster(3, withServiceType("LoadBalancer")),
			svc:     clientService(corev1.ServiceTypeLoadBalancer, natsPorts, corev1.LoadBalancerIngress{Hostname: "abc.elb.example.com"}),
			want:    v1alpha1.Endpoint{Internal: internal, External: "tls://abc.elb.example.com:4222"},
		},
		{
			name:    "hostname preferred over IP in the same ingress entry",
			cluster: natsCluster(3, withServiceType("LoadBalancer")),
			svc: clientService(corev1.ServiceTypeLoadBalancer, natsPorts,
				corev1.LoadBalancerIngress{IP: "203.0.113.7", Hostname: "abc.elb.example.com"}),
			want: v1alpha1.Endpoint{Internal: internal, External: "tls://abc.elb.example.com:4222"},
		},
		{
			name:    "first ingress entry with an address is used",
			cluster: natsCluster(3, withServiceType("LoadBalancer")),
			svc: clientService(corev1.ServiceTypeLoadBalancer, natsPorts,
				corev1.LoadBalancerIngress{}, corev1.LoadBalancerIngress{IP: "198.51.100.9"}, corev1.LoadBalancerIngress{IP: "203.0.113.7"}),
			want: v1alpha1.Endpoint{Internal: internal, External: "tls://198.51.100.9:4222"},
		},
		{
			name:    "IPv6 ingress address is bracketed",
			cluster: natsCluster(3, withServiceType("LoadBalancer")),
			svc:     clientService(corev1.ServiceTypeLoadBalancer, natsPorts, corev1.LoadBalancerIngress{IP: "2001:db8::1"}),
			want:    v1alpha1.Endpoint{Internal: internal, External: "tls://[2001:db8::1]:4222"},
		},
		{
			name:    "NodePort reports the node port of port 4222 and no external URL",
			cluster: natsCluster(3, withServiceType("NodePort")),
			svc:     clientService(corev1.ServiceTypeNodePort, natsPorts),
			want:    v1alpha1.Endpoint{Internal: internal, NodePort: 30422},
		},
		{
			name:    "NodePort not allocated yet reports no port and is not pending",
			cluster: natsCluster(3, withServiceType("NodePort")),
			svc:     clientService(corev1.ServiceTypeNodePort, []corev1.ServicePort{{Name: "nats", Port: 4222}}),
			want:    v1alpha1.Endpoint{Internal: internal},
		},
		{
			name:    "NodePort without a live Service reports no port and is not pending",
			cluster: natsCluster(3, withServiceType("NodePort")),
			want:    v1alpha1.Endpoint{Internal: internal},
		},
		{
			name:    "NodePort of other ports is never reported",
			cluster: natsCluster(3, withServiceType("NodePort")),
			svc:     clientService(corev1.ServiceTypeNodePort, []corev1.ServicePort{{Name: "monitor", Port: 8222, NodePort: 30822}}),
			want:    v1alpha1.Endpoint{Internal: internal},
		},
		{
			name: "internal URL follows name and namespace",
			cluster: natsCluster(1, func(c *v1alpha1.NatsCluster) {
				c.Name, c.Namespace = "events", "team-a"
			}),
			want: v1alpha1.Endpoint{Internal: "tls://events.team-a.svc:4222"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pending := Endpoint(tc.cluster, tc.svc)
			if got != tc.want || pending != tc.wantPending {
				t.Errorf("Endpoint = %+v, pending %t; want %+v, pending %t", got, pending, tc.want, tc.wantPending)
			}
		})
	}
}

// TestNatsClusterReportsEndpoint checks that the status carries what Endpoint
// derives from the observed client Service.
func TestNatsClusterReportsEndpoint(t *testing.T) {
	st := NatsCluster(ClusterObservation{
		Cluster:       natsCluster(3, withServiceType("LoadBalancer")),
		StatefulSet:   settled(3, 3),
		ClientService: clientService(corev1.ServiceTypeLoadBalancer, nil, corev1.LoadBalancerIngress{IP: "2001:db8::1"}),
		Now:           now,
	})
	want := v1alpha1.Endpoint{Internal: "tls://orders.shop.svc:4222", External: "tls://[2001:db8::1]:4222"}
	if st.Endpoint != want {
		t.Errorf("status.endpoint = %+v, want %+v", st.Endpoint, want)
	}
}

func TestEndpointsUseTLSSchemeWithClientTLS(t *testing.T) {
	c := natsCluster(3, func(c *v1alpha1.NatsCluster) {
		c.Spec.Service.Type = v1alpha1.ServiceType(corev1.ServiceTypeLoadBalancer)
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: "s"}
	})
	ep, pending := Endpoint(c, loadBalancer(corev1.LoadBalancerIngress{IP: "203.0.113.7"}))
	if pending || !strings.HasPrefix(ep.Internal, "tls://") || ep.External != "tls://203.0.113.7:4222" {
		t.Fatalf("endpoint %+v (pending %v), want tls:// for both", ep, pending)
	}
}
