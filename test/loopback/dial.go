package loopback

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Dial connects to an address as a client inside the cluster would, cluster
// DNS included, for clients in the test process (the operator's NATS
// connections among them):
//   - <pod>.<service>.<ns>.svc[.cluster.local]:port is the pod's address;
//   - <service>.<ns>[.svc[.cluster.local]]:port is a ready pod the Service
//     selects, at the target port, as kube-proxy would route it;
//   - anything else is dialed as it is.
func (c *Cluster) Dial(network, address string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	address, err := c.clusterAddress(ctx, address)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// dialTimeout bounds a dial: the name's resolution and the connection.
const dialTimeout = 5 * time.Second

// clusterAddress is address (host:port) with a cluster DNS name resolved
// as Dial says; any other address is returned as it is.
func (c *Cluster) clusterAddress(ctx context.Context, address string) (string, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", err
	}
	to, ok, err := c.resolve(ctx, host, port)
	if err != nil || !ok {
		return address, err
	}
	return to, nil
}

// resolve maps a cluster DNS name and port to an address on this machine;
// ok is false for names that are not the cluster's.
func (c *Cluster) resolve(ctx context.Context, host, port string) (string, bool, error) {
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(host), "."), ".")
	if pod, svc, ns, ok := podDNSName(host); ok && len(labels) >= 4 {
		if _, err := c.headlessService(ctx, ns, svc); err != nil {
			return "", false, err
		}
		ip, ok := c.kubelet.dns.lookup(ns, pod, svc)
		if !ok {
			// As cluster DNS answers for a pod that does not exist (yet).
			return "", false, fmt.Errorf("no such host: %s", host)
		}
		return net.JoinHostPort(ip, port), true, nil
	}
	svc, ns, ok := serviceDNSName(labels)
	if !ok {
		return "", false, nil
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", false, err
	}
	addr, err := c.serviceEndpoint(ctx, ns, svc, int32(p))
	return addr, err == nil, err
}

// serviceDNSName splits <service>.<ns>, <service>.<ns>.svc and
// <service>.<ns>.svc.cluster.local.
func serviceDNSName(labels []string) (svc, ns string, ok bool) {
	switch {
	case len(labels) == 2:
	case len(labels) == 3 && labels[2] == "svc":
	case len(labels) == 5 && strings.Join(labels[2:], ".") == "svc."+clusterDomain:
	default:
		return "", "", false
	}
	return labels[0], labels[1], true
}

func (c *Cluster) headlessService(ctx context.Context, ns, name string) (*corev1.Service, error) {
	svc, err := c.Kubernetes.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("no such host: %s.%s: %w", name, ns, err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return nil, fmt.Errorf("service %s/%s is not headless: its pods have no DNS names", ns, name)
	}
	return svc, nil
}

// serviceEndpoint is the address a connection to the Service's port
// reaches: a ready pod the Service selects, at the target port. It reads
// the pods, not the EndpointSlices, because the API server refuses
// loopback addresses in an EndpointSlice, so the slices of this cluster
// stay empty.
func (c *Cluster) serviceEndpoint(ctx context.Context, ns, name string, port int32) (string, error) {
	svc, err := c.Kubernetes.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("no such host: %s.%s: %w", name, ns, err)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil || len(svc.Spec.Selector) == 0 {
		return "", fmt.Errorf("connection refused: service %s/%s selects no pods on port %d", ns, name, port)
	}
	pods, err := c.Kubernetes.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String(),
	})
	if err != nil {
		return "", err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.PodIP == "" || pod.DeletionTimestamp != nil || !(PodReady(pod) || svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		if target, ok := targetPort(pod, sp); ok {
			return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(target)), nil
		}
	}
	return "", fmt.Errorf("connection refused: service %s/%s has no ready endpoint for port %d", ns, name, port)
}

// targetPort is the pod's port behind a Service port: a number, or the
// name of one of its containers' ports.
func targetPort(pod *corev1.Pod, sp *corev1.ServicePort) (int, bool) {
	switch {
	case sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntValue() != 0:
		return sp.TargetPort.IntValue(), true
	case sp.TargetPort.Type == intstr.String && sp.TargetPort.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == sp.TargetPort.StrVal {
					return int(p.ContainerPort), true
				}
			}
		}
		return 0, false
	}
	return int(sp.Port), true
}

// PodReady says whether pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
