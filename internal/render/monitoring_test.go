package render_test

import (
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func withMonitoring(m v1alpha1.MonitoringSpec) func(*v1alpha1.NatsCluster) {
	m.Enabled = true
	return func(c *v1alpha1.NatsCluster) { c.Spec.Monitoring = &m }
}

func metricsContainerOf(t *testing.T, c *v1alpha1.NatsCluster, in render.Inputs) (corev1.Container, corev1.PodSpec) {
	t.Helper()
	spec := statefulSetOf(t, c, in).Spec.Template.Spec
	return containerNamed(t, spec, render.MetricsContainerName), spec
}

// TestMonitoringOffRendersNothing: without spec.monitoring no container,
// port, rule, PodMonitor or PrometheusRule appears.
func TestMonitoringOffRendersNothing(t *testing.T) {
	objs := renderObjects(t, cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true})), render.Inputs{})
	if n := count[*monitoringv1.PodMonitor](objs) + count[*monitoringv1.PrometheusRule](objs); n != 0 {
		t.Fatalf("%d monitoring objects without spec.monitoring", n)
	}
	if len(statefulSetOf(t, cluster(), render.Inputs{}).Spec.Template.Spec.Containers) != 1 {
		t.Fatal("a metrics container without spec.monitoring")
	}
}

// TestMetricsContainer: the operator's image runs `kubenats exporter` for
// this server, hardened, with no secret in its arguments or environment.
func TestMetricsContainer(t *testing.T) {
	c := cluster(withMonitoring(v1alpha1.MonitoringSpec{MaxSeriesPerServer: 500}))
	ctr, spec := metricsContainerOf(t, c, render.Inputs{ExporterImage: "registry.example/kubenats:v9"})
	if ctr.Image != "registry.example/kubenats:v9" || ctr.Args[0] != "exporter" {
		t.Fatalf("image %s args %v", ctr.Image, ctr.Args)
	}
	for _, want := range []string{"-namespace=ns", "-natscluster=demo", "-max-series=500", "-monitor-url=http://127.0.0.1:8222", "-listen=:7777"} {
		if !slices.Contains(ctr.Args, want) {
			t.Errorf("no %s in %v", want, ctr.Args)
		}
	}
	if len(ctr.Ports) != 1 || ctr.Ports[0].Name != "metrics" || ctr.Ports[0].ContainerPort != 7777 {
		t.Errorf("ports %+v", ctr.Ports)
	}
	sc := ctr.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation {
		t.Errorf("security context %+v", sc)
	}
	if len(secretEnv(ctr)) != 0 || len(ctr.VolumeMounts) != 0 || *spec.AutomountServiceAccountToken {
		t.Errorf("the metrics container gets secrets or a token: env %v mounts %v", ctr.Env, ctr.VolumeMounts)
	}
	// A pod is Ready when every container is: a probe here would let a
	// stumbling exporter take its server out of the Services and hold a
	// rollout (the careless variant, watched failing here).
	if ctr.ReadinessProbe != nil || ctr.LivenessProbe != nil || ctr.StartupProbe != nil {
		t.Errorf("the metrics container has probes: %+v", ctr.ReadinessProbe)
	}
	if d, _ := metricsContainerOf(t, c, render.Inputs{}); d.Image != render.DefaultExporterImage {
		t.Errorf("default image %s", d.Image)
	}
}

// TestMetricsContainerWithMonitorTLS: https to the monitor port, verified
// under the pod's DNS name, with only ca.crt mounted unless the client
// port verifies clients. Careless variant watched failing: mounting the
// client certificate's Secret whole gives the metrics container the
// server's private key when it needs none.
func TestMetricsContainerWithMonitorTLS(t *testing.T) {
	for _, tc := range []struct {
		name   string
		verify bool
		keys   []string
	}{
		{"no client verification: the CA only", false, []string{"ca.crt"}},
		{"clients verified: the pair too", true, []string{"ca.crt", "tls.crt", "tls.key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(withClientTLS("client-cert"), withMonitorTLS(), withMonitoring(v1alpha1.MonitoringSpec{}))
			c.Spec.TLS.Client.Verify = tc.verify
			ctr, spec := metricsContainerOf(t, c, render.Inputs{})
			if !slices.Contains(ctr.Args, "-monitor-url=https://127.0.0.1:8222") ||
				!slices.Contains(ctr.Args, "-tls-server-name=$(POD_NAME).demo-headless.ns.svc") {
				t.Fatalf("args %v", ctr.Args)
			}
			if len(ctr.VolumeMounts) != 1 {
				t.Fatalf("mounts %+v", ctr.VolumeMounts)
			}
			for _, v := range spec.Volumes {
				if v.Name != ctr.VolumeMounts[0].Name {
					continue
				}
				var keys []string
				for _, it := range v.Secret.Items {
					keys = append(keys, it.Key)
				}
				if v.Secret.SecretName != "client-cert" || !slices.Equal(keys, tc.keys) {
					t.Fatalf("volume %s keys %v, want client-cert %v", v.Secret.SecretName, keys, tc.keys)
				}
			}
		})
	}
}

// TestMetricsPortOnHeadlessService: declared, with appProtocol http, so a
// mesh sidecar knows what it carries.
func TestMetricsPortOnHeadlessService(t *testing.T) {
	svc := find[*corev1.Service](t, renderObjects(t, cluster(withMonitoring(v1alpha1.MonitoringSpec{})), render.Inputs{}), "demo-headless")
	for _, p := range svc.Spec.Ports {
		if p.Name == "metrics" {
			if p.Port != 7777 || *p.AppProtocol != "http" || p.TargetPort.StrVal != "metrics" {
				t.Fatalf("metrics port %+v", p)
			}
			return
		}
	}
	t.Fatalf("no metrics port in %+v", svc.Spec.Ports)
}

// TestNetworkPolicyMetricsPort: the metrics port is open to the listed
// peers only, or by default to the cluster's own namespace; never to all.
// Careless variant watched failing: a rule without From (admitting
// everyone) for 7777.
func TestNetworkPolicyMetricsPort(t *testing.T) {
	prom := v1alpha1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
	for _, tc := range []struct {
		name string
		from []v1alpha1.NetworkPolicyPeer
		want func(networkingv1.NetworkPolicyPeer) bool
	}{
		{"default: the namespace's own pods", nil, func(p networkingv1.NetworkPolicyPeer) bool {
			return p.PodSelector != nil && len(p.PodSelector.MatchLabels) == 0 && p.NamespaceSelector == nil && p.IPBlock == nil
		}},
		{"listed peers only", []v1alpha1.NetworkPolicyPeer{prom}, func(p networkingv1.NetworkPolicyPeer) bool {
			return p.NamespaceSelector != nil && p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == "monitoring"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(withNetworkPolicy(v1alpha1.NetworkPolicySpec{Enabled: true}), withMonitoring(v1alpha1.MonitoringSpec{From: tc.from}))
			np := find[*networkingv1.NetworkPolicy](t, renderObjects(t, c, render.Inputs{}), "demo")
			var rules []networkingv1.NetworkPolicyIngressRule
			for _, r := range np.Spec.Ingress {
				if r.Ports[0].Port.IntVal == 7777 {
					rules = append(rules, r)
				}
			}
			if len(rules) != 1 || len(rules[0].From) != 1 || !tc.want(rules[0].From[0]) {
				t.Fatalf("metrics rules %+v", rules)
			}
		})
	}
}

// TestPodMonitor: in the cluster's namespace, selecting exactly its pods
// (managed-by included: never a namesake's), on the metrics port, at the
// interval asked, with the user's labels; absent when the controller saw
// no Prometheus Operator.
func TestPodMonitor(t *testing.T) {
	c := cluster(withMonitoring(v1alpha1.MonitoringSpec{PodMonitor: v1alpha1.PodMonitorSpec{Interval: "15s", Labels: map[string]string{"release": "prom"}}}))
	objs := renderObjects(t, c, render.Inputs{})
	pm := find[*monitoringv1.PodMonitor](t, objs, "demo")
	if pm.Namespace != "ns" || !slices.Equal(pm.Spec.NamespaceSelector.MatchNames, []string{"ns"}) {
		t.Errorf("namespace %s selector %+v", pm.Namespace, pm.Spec.NamespaceSelector)
	}
	if pm.Spec.Selector.MatchLabels[render.LabelManagedBy] != render.ManagedBy || pm.Spec.Selector.MatchLabels[render.LabelInstance] != "demo" {
		t.Errorf("selector %+v", pm.Spec.Selector)
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if *ep.Port != "metrics" || ep.Interval != "15s" || pm.Labels["release"] != "prom" {
		t.Errorf("endpoint %+v labels %v", ep, pm.Labels)
	}
	rule := find[*monitoringv1.PrometheusRule](t, objs, "demo")
	if !strings.Contains(rule.Spec.Groups[0].Rules[0].Expr.String(), `natscluster="demo"`) {
		t.Errorf("rule not scoped: %s", rule.Spec.Groups[0].Rules[0].Expr.String())
	}
	none := renderObjects(t, c, render.Inputs{NoPrometheusOperator: true})
	if count[*monitoringv1.PodMonitor](none)+count[*monitoringv1.PrometheusRule](none) != 0 {
		t.Error("PodMonitor rendered without the Prometheus Operator")
	}
}

// TestPodMonitorBoundsEveryScrape: every scrape of the PodMonitor's
// targets is bounded: samples by spec.monitoring.maxSeriesPerServer plus
// what the exporter serves beside streams (so the exporter's own bound
// never trips Prometheus'), targets by twice the servers, labels per
// sample and their lengths, and the dropped targets kept. Careless
// variants run: the PodMonitor as it was, with no limit ("sample limit
// <nil>": a pod given the server labels floods a shared Prometheus), and
// a sample limit of maxSeriesPerServer alone (a full exporter's scrape
// is then refused whole: "sample limit 10000, want 18192").
func TestPodMonitorBoundsEveryScrape(t *testing.T) {
	for _, tc := range []struct {
		max      int32
		replicas int32
		samples  int64
	}{{0, 3, 10000 + 8192}, {250000, 5, 250000 + 8192}} {
		c := cluster(withMonitoring(v1alpha1.MonitoringSpec{MaxSeriesPerServer: tc.max}))
		c.Spec.Replicas = &tc.replicas
		pm := find[*monitoringv1.PodMonitor](t, renderObjects(t, c, render.Inputs{}), "demo")
		s := pm.Spec
		show := func(v *int64) any {
			if v == nil {
				return "<nil>"
			}
			return *v
		}
		if s.SampleLimit == nil || *s.SampleLimit != tc.samples {
			t.Errorf("sample limit %v, want %d", show(s.SampleLimit), tc.samples)
		}
		if s.TargetLimit == nil || *s.TargetLimit != 2*int64(tc.replicas) {
			t.Errorf("target limit %v, want %d", show(s.TargetLimit), 2*tc.replicas)
		}
		for name, v := range map[string]*int64{"label limit": s.LabelLimit, "label name length": s.LabelNameLengthLimit,
			"label value length": s.LabelValueLengthLimit, "dropped targets kept": s.KeepDroppedTargets} {
			if v == nil || *v <= 0 {
				t.Fatalf("%s %v, want a bound", name, show(v))
			}
		}
		// A consumer series (the exporter's widest) passes the label bounds.
		if *s.LabelLimit < 17+6 || *s.LabelValueLengthLimit < 255 {
			t.Errorf("label limit %d, value length %d: the exporter's consumer series would be refused", *s.LabelLimit, *s.LabelValueLengthLimit)
		}
	}
}

// TestMeshMetricsPortPermissive: under STRICT the metrics port stays
// PERMISSIVE for a scraper outside the mesh; the monitor port does not.
func TestMeshMetricsPortPermissive(t *testing.T) {
	pa := find[*securityv1.PeerAuthentication](t, renderObjects(t, cluster(withMesh(v1alpha1.MeshMTLSStrict), withMonitoring(v1alpha1.MonitoringSpec{})), render.Inputs{}), "demo")
	if m := pa.Spec.PortLevelMtls[7777]; m == nil || m.Mode.String() != "PERMISSIVE" {
		t.Fatalf("port levels %+v", pa.Spec.PortLevelMtls)
	}
	if _, ok := pa.Spec.PortLevelMtls[8222]; ok {
		t.Fatal("the monitor port loosened without monitorPermissive")
	}
}
