package render_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// The meaning of this policy (who reaches which port) is judged by a real
// evaluator in test/netpol (TestMonitoringPortsWithoutNetworkPolicy);
// these tests hold its shape.

func portsPolicyOf(t *testing.T, c *v1alpha1.NatsCluster, in render.Inputs) *networkingv1.NetworkPolicy {
	t.Helper()
	return find[*networkingv1.NetworkPolicy](t, renderObjects(t, c, in), c.MonitoringPortsPolicyName())
}

// openToAnyone reports whether a rule without peers admits TCP port p:
// in a range, or listed alone.
func openToAnyone(np *networkingv1.NetworkPolicy, p int32) (inRange, alone bool) {
	for _, r := range np.Spec.Ingress {
		if len(r.From) != 0 {
			continue
		}
		if len(r.Ports) == 0 { // every port
			inRange = true
		}
		for _, port := range r.Ports {
			if port.Protocol == nil || *port.Protocol != corev1.ProtocolTCP || port.Port == nil {
				continue
			}
			from := port.Port.IntVal
			switch {
			case port.EndPort == nil && from == p:
				alone = true
			case port.EndPort != nil && from <= p && p <= *port.EndPort:
				inRange = true
			}
		}
	}
	return inRange, alone
}

// TestMonitoringPortsPolicyClosesOnlyThoseTwoPorts: a cluster without
// spec.networkPolicy gets a policy selecting its servers for ingress in
// which every TCP port but 8222 and 7777 is open to anyone (in a range,
// and each port the server pod declares one by one as well, for plugins
// that read only a range's first port), UDP and SCTP too; 8222 is admitted
// from the operator alone, 7777 from the cluster's namespace. Careless
// variants run: no policy at all (the code before: "found 0 objects of
// type *v1.NetworkPolicy named demo-monitoring-ports"), one rule
// admitting every port ("port 7777 open to anyone: true, want false"),
// and the ranges without the ports one by one ("4222 is not listed
// alone").
func TestMonitoringPortsPolicyClosesOnlyThoseTwoPorts(t *testing.T) {
	c := cluster(withMonitoring(v1alpha1.MonitoringSpec{}))
	c.Spec.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}}
	c.Spec.Auth.Mode = v1alpha1.AuthUsers
	np := portsPolicyOf(t, c, render.Inputs{})
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) ||
		np.Spec.PodSelector.MatchLabels[render.LabelManagedBy] != render.ManagedBy || np.Spec.PodSelector.MatchLabels[render.LabelInstance] != "demo" {
		t.Fatalf("policy selects %+v for %v, want the cluster's servers for ingress", np.Spec.PodSelector, np.Spec.PolicyTypes)
	}
	for p := int32(1); p <= 65535; p++ {
		inRange, _ := openToAnyone(np, p)
		if closed := p == render.MonitorPort || p == render.MetricsPort; inRange == closed {
			t.Fatalf("port %d open to anyone: %v, want %v", p, inRange, !closed)
		}
	}
	for _, p := range []int32{render.ClientPort, render.ClusterPort, render.LeafnodePort} {
		if _, alone := openToAnyone(np, p); !alone {
			t.Errorf("%d is not listed alone", p)
		}
	}
	for _, p := range []int32{render.MonitorPort, render.MetricsPort} {
		if inRange, alone := openToAnyone(np, p); inRange || alone {
			t.Errorf("%d is open to anyone", p)
		}
	}
	var udp, sctp bool
	for _, r := range np.Spec.Ingress {
		for _, port := range r.Ports {
			if len(r.From) == 0 && port.Port == nil && port.Protocol != nil {
				udp = udp || *port.Protocol == corev1.ProtocolUDP
				sctp = sctp || *port.Protocol == corev1.ProtocolSCTP
			}
		}
	}
	if !udp || !sctp {
		t.Errorf("UDP open %v, SCTP open %v: want both, as without a policy", udp, sctp)
	}
	monitor := rulesOnPort(np, render.MonitorPort)
	if len(monitor) != 1 || len(monitor[0].From) != 1 || monitor[0].From[0].NamespaceSelector == nil ||
		monitor[0].From[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != v1alpha1.DefaultOperatorNamespace {
		t.Errorf("monitor port rules %+v, want the operator's pods alone", monitor)
	}
	metrics := rulesOnPort(np, render.MetricsPort)
	if len(metrics) != 1 || len(metrics[0].From) != 1 || metrics[0].From[0].PodSelector == nil || metrics[0].From[0].NamespaceSelector != nil {
		t.Errorf("metrics port rules %+v, want the pods of the cluster's namespace", metrics)
	}
}

// TestMonitoringPortsPolicyAdmitsWhatIsConfigured: the operator's pods
// where the operator says it runs (over the field's default), the
// monitoring peers of spec.networkPolicy, and spec.monitoring.from on the
// metrics port; with monitoring off, 7777 is open to no one. The full
// policy, once enabled, takes its place. Careless variant run: the
// operator taken from spec.networkPolicy.operator alone (an operator
// installed in another namespace loses the monitor port: "operator
// namespace kubenats-system, want ops").
func TestMonitoringPortsPolicyAdmitsWhatIsConfigured(t *testing.T) {
	prom := v1alpha1.NetworkPolicyPeer{NamespaceSelector: labelSelector(corev1.LabelMetadataName, "monitoring")}
	c := cluster(withMonitoring(v1alpha1.MonitoringSpec{From: []v1alpha1.NetworkPolicyPeer{prom}}),
		withNetworkPolicy(v1alpha1.NetworkPolicySpec{Monitoring: []v1alpha1.NetworkPolicyPeer{prom}}))
	np := portsPolicyOf(t, c, render.Inputs{OperatorNamespace: "ops"})
	monitor := rulesOnPort(np, render.MonitorPort)
	if len(monitor) != 1 || len(monitor[0].From) != 2 {
		t.Fatalf("monitor port rules %+v, want the operator and the monitoring peer", monitor)
	}
	if ns := monitor[0].From[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName]; ns != "ops" {
		t.Errorf("operator namespace %s, want ops", ns)
	}
	if monitor[0].From[1].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "monitoring" {
		t.Errorf("monitoring peer %+v", monitor[0].From[1])
	}
	metrics := rulesOnPort(np, render.MetricsPort)
	if len(metrics) != 1 || len(metrics[0].From) != 1 || metrics[0].From[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "monitoring" {
		t.Errorf("metrics port rules %+v, want spec.monitoring.from", metrics)
	}

	off := portsPolicyOf(t, cluster(), render.Inputs{})
	if r := rulesOnPort(off, render.MetricsPort); len(r) != 0 {
		t.Errorf("metrics port rules without monitoring %+v, want none", r)
	}
	if inRange, alone := openToAnyone(off, render.MetricsPort); inRange || alone {
		t.Error("7777 is open to anyone without monitoring")
	}
}
