package render

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Without spec.networkPolicy, a cluster still gets a NetworkPolicy,
// <name>-monitoring-ports, that guards its two ports nobody but the
// operator and a scraper needs: the monitor port 8222 (/connz, /accountz, /jsz: every
// connection's and account's details) and the metrics port 7777. Every
// other port stays open to everyone as before, so that turning the full
// policy off changes nothing else: the client and route ports, the
// listeners, and whatever a mesh sidecar serves.
//
// "Every other port" is written twice: as ranges (endPort), and as the
// server pod's own ports one by one, for network plugins that read only
// the first port of a range. On those, a port no container of the
// template declares (a mesh sidecar's) is closed; on the others, open.

// withMonitoringPortsPolicy puts the monitoring ports' policy in front of
// objs when c asks for no NetworkPolicy of its own; the full one admits
// those ports as narrowly.
func withMonitoringPortsPolicy(c *v1alpha1.NatsCluster, in Inputs, objs []client.Object) ([]client.Object, error) {
	if c.Spec.NetworkPolicyEnabled() {
		return objs, nil
	}
	np, err := MonitoringPortsPolicy(c, in, servedPorts(objs))
	if err != nil {
		return nil, err
	}
	return slices.Insert(objs, 0, client.Object(np)), nil
}

// MonitoringPortsPolicy admits the monitor port from the operator and
// spec.networkPolicy.monitoring, the metrics port (with monitoring) from
// spec.monitoring.from or else the cluster's own namespace, and every
// other port, served (open, TCP, the server pod's) or not, from anyone.
func MonitoringPortsPolicy(c *v1alpha1.NatsCluster, in Inputs, open []int32) (*networkingv1.NetworkPolicy, error) {
	var spec v1alpha1.NetworkPolicySpec
	if c.Spec.NetworkPolicy != nil {
		spec = *c.Spec.NetworkPolicy
	}
	operator := spec.Operator
	if in.OperatorNamespace != "" {
		// The operator knows where it runs; the field's default
		// (kubenats-system) is only a guess when it is not set on purpose.
		operator.Namespace = in.OperatorNamespace
	}
	operatorPods, err := operatorPeer(operator)
	if err != nil {
		return nil, err
	}
	monitoring, err := policyPeers("spec.networkPolicy.monitoring", spec.Monitoring)
	if err != nil {
		return nil, err
	}
	rules := []networkingv1.NetworkPolicyIngressRule{
		ingressRule(MonitorPort, append([]networkingv1.NetworkPolicyPeer{operatorPods}, monitoring...)),
	}
	metrics, err := metricsRule(c)
	if err != nil {
		return nil, err
	}
	rules = append(rules, metrics...)
	rules = append(rules, networkingv1.NetworkPolicyIngressRule{Ports: portsBut(open, MetricsPort, MonitorPort)})
	return &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: objectMeta(c, c.MonitoringPortsPolicyName()),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: ManagedSelectorLabels(c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}, nil
}

// portsBut is every TCP port but the closed ones (which must be given in
// ascending order), as ranges and then each of open one by one, and every
// UDP and SCTP port.
func portsBut(open []int32, closed ...int32) []networkingv1.NetworkPolicyPort {
	tcp := func(from, to int32) networkingv1.NetworkPolicyPort {
		p := networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(from))}
		if to > from {
			p.EndPort = ptr.To(to)
		}
		return p
	}
	var out []networkingv1.NetworkPolicyPort
	from := int32(1)
	for _, c := range closed {
		if c > from {
			out = append(out, tcp(from, c-1))
		}
		from = c + 1
	}
	out = append(out, tcp(from, 65535))
	for _, p := range open {
		if !slices.Contains(closed, p) {
			out = append(out, tcp(p, p))
		}
	}
	return append(out,
		networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolUDP)},
		networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolSCTP)})
}

// servedPorts are the TCP ports the containers of the server pods
// declare, sorted, each once.
func servedPorts(objs []client.Object) []int32 {
	var out []int32
	for _, o := range objs {
		sts, ok := o.(*appsv1.StatefulSet)
		if !ok {
			continue
		}
		for _, c := range sts.Spec.Template.Spec.Containers {
			for _, p := range c.Ports {
				if (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) && !slices.Contains(out, p.ContainerPort) {
					out = append(out, p.ContainerPort)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
