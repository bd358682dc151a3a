package render

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// withNetworkPolicy puts c's NetworkPolicy in front of objs when c asks for
// one: applied first, it is in place before any server starts.
func withNetworkPolicy(c *v1alpha1.NatsCluster, objs []client.Object) ([]client.Object, error) {
	if !c.Spec.NetworkPolicyEnabled() {
		return objs, nil
	}
	np, err := NetworkPolicy(c)
	if err != nil {
		return nil, err
	}
	return slices.Insert(objs, 0, client.Object(np)), nil
}

// NetworkPolicy admits to c's servers, port by port, only who needs it:
// routes from the cluster's own servers, clients from the operator, its
// backup Jobs and spec.networkPolicy.clients, monitoring from the operator and
// spec.networkPolicy.monitoring. Every other ingress is denied, since the
// policy selects the servers for Ingress. Selectors the API server would
// refuse are an error naming the field, so that `kubenats render` and the
// controller refuse them alike.
func NetworkPolicy(c *v1alpha1.NatsCluster) (*networkingv1.NetworkPolicy, error) {
	var spec v1alpha1.NetworkPolicySpec
	if c.Spec.NetworkPolicy != nil {
		spec = *c.Spec.NetworkPolicy
	}
	operator, err := operatorPeer(spec.Operator)
	if err != nil {
		return nil, err
	}
	clients, err := policyPeers("spec.networkPolicy.clients", spec.Clients)
	if err != nil {
		return nil, err
	}
	monitoring, err := policyPeers("spec.networkPolicy.monitoring", spec.Monitoring)
	if err != nil {
		return nil, err
	}
	rules, err := metricsRule(c)
	if err != nil {
		return nil, err
	}
	listenerRules, err := listenerIngressRules(c, clients)
	if err != nil {
		return nil, err
	}
	rules = append(rules, listenerRules...)
	topology, err := topologyIngress(c)
	if err != nil {
		return nil, err
	}
	rules = append(rules, topology...)
	// A podSelector alone selects pods in the policy's namespace: the
	// servers of this cluster, not those of a namesake elsewhere; with the
	// managed-by label, not those of a namesake in this namespace either
	// (a Helm release of the same name would reach the route port).
	servers := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: ManagedSelectorLabels(c)}}
	// The Jobs that back up c's streams (backup_job.go) are clients.
	backups := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
		LabelComponent: BackupComponent, LabelBackupOf: c.Name, LabelManagedBy: ManagedBy}}}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: objectMeta(c, c.NetworkPolicyName()),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: ManagedSelectorLabels(c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: append([]networkingv1.NetworkPolicyIngressRule{
				ingressRule(ClientPort, append([]networkingv1.NetworkPolicyPeer{operator, backups}, clients...)),
				ingressRule(ClusterPort, []networkingv1.NetworkPolicyPeer{servers}),
				ingressRule(MonitorPort, append([]networkingv1.NetworkPolicyPeer{operator}, monitoring...)),
			}, rules...),
		},
	}, nil
}

// metricsRule opens the metrics port, with spec.monitoring, to the peers
// in spec.monitoring.from or, when none are listed, to the pods of the
// cluster's own namespace: a Prometheus of the namespace's own team then
// works as it is, and one elsewhere (a platform's) is admitted only when
// named. The series tell less than the monitor port (no connections, no
// account details), which stays closed to them.
func metricsRule(c *v1alpha1.NatsCluster) ([]networkingv1.NetworkPolicyIngressRule, error) {
	if !c.Spec.MonitoringEnabled() {
		return nil, nil
	}
	from, err := policyPeers("spec.monitoring.from", c.Spec.Monitoring.From)
	if err != nil {
		return nil, err
	}
	if len(from) == 0 {
		from = []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
	}
	return []networkingv1.NetworkPolicyIngressRule{ingressRule(MetricsPort, from)}, nil
}

// ingressRule admits from to one TCP port. Ports are numbers, the same as
// the container's: a named port would depend on the container's port names
// and is not supported by every network plugin.
func ingressRule(port int32, from []networkingv1.NetworkPolicyPeer) networkingv1.NetworkPolicyIngressRule {
	return networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{{
			Protocol: ptr.To(corev1.ProtocolTCP),
			Port:     ptr.To(intstr.FromInt32(port)),
		}},
		From: from,
	}
}

// operatorPeer selects the operator's pods in the operator's namespace.
// Every namespace carries its name as the label kubernetes.io/metadata.name,
// set by the API server and immutable.
func operatorPeer(o v1alpha1.OperatorPeer) (networkingv1.NetworkPolicyPeer, error) {
	ns := o.NamespaceOrDefault()
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return networkingv1.NetworkPolicyPeer{}, fmt.Errorf("spec.networkPolicy.operator.namespace %q: %s", ns, errs[0])
	}
	pods := &metav1.LabelSelector{MatchLabels: o.PodLabelsOrDefault()}
	if err := checkSelector("spec.networkPolicy.operator.podLabels", pods); err != nil {
		return networkingv1.NetworkPolicyPeer{}, err
	}
	return networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
		PodSelector:       pods,
	}, nil
}

// policyPeers translates the user's peers, checking each as the API server
// would check it in a NetworkPolicy.
func policyPeers(field string, in []v1alpha1.NetworkPolicyPeer) ([]networkingv1.NetworkPolicyPeer, error) {
	out := make([]networkingv1.NetworkPolicyPeer, 0, len(in))
	for i, p := range in {
		at := fmt.Sprintf("%s[%d]", field, i)
		peer := networkingv1.NetworkPolicyPeer{
			NamespaceSelector: p.NamespaceSelector.DeepCopy(),
			PodSelector:       p.PodSelector.DeepCopy(),
		}
		if err := checkSelector(at+".namespaceSelector", peer.NamespaceSelector); err != nil {
			return nil, err
		}
		if err := checkSelector(at+".podSelector", peer.PodSelector); err != nil {
			return nil, err
		}
		if p.IPBlock != nil {
			if peer.NamespaceSelector != nil || peer.PodSelector != nil {
				return nil, fmt.Errorf("%s: ipBlock cannot be combined with namespaceSelector or podSelector", at)
			}
			block, err := ipBlock(at+".ipBlock", *p.IPBlock)
			if err != nil {
				return nil, err
			}
			peer.IPBlock = block
		}
		if peer.NamespaceSelector == nil && peer.PodSelector == nil && peer.IPBlock == nil {
			return nil, fmt.Errorf("%s: a peer needs namespaceSelector, podSelector or ipBlock", at)
		}
		out = append(out, peer)
	}
	return out, nil
}

// checkSelector refuses what metav1 cannot turn into a selector: bad keys or
// values, unknown operators, In without values.
func checkSelector(field string, s *metav1.LabelSelector) error {
	if s == nil {
		return nil
	}
	if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// ipBlock checks a CIDR and its exceptions, which must lie strictly inside.
func ipBlock(field string, b v1alpha1.IPBlock) (*networkingv1.IPBlock, error) {
	outer, err := netip.ParsePrefix(string(b.CIDR))
	if err != nil {
		return nil, fmt.Errorf("%s.cidr %q is not a CIDR", field, b.CIDR)
	}
	out := &networkingv1.IPBlock{CIDR: string(b.CIDR)}
	for _, e := range b.Except {
		inner, err := netip.ParsePrefix(string(e))
		if err != nil || inner.Bits() <= outer.Bits() || !outer.Contains(inner.Addr()) {
			return nil, fmt.Errorf("%s.except %q is not a CIDR strictly inside %s", field, e, b.CIDR)
		}
		out.Except = append(out.Except, string(e))
	}
	return out, nil
}
