package render_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/render"
)

func withMesh(mtls v1alpha1.MeshMTLSMode) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.Mesh = &v1alpha1.MeshSpec{Istio: &v1alpha1.IstioMeshSpec{MTLS: mtls}}
	}
}

// TestMeshOffRendersNothingOfIstio: without spec.mesh.istio, nothing of
// Istio's appears, as before the mesh existed (an empty spec.mesh too).
func TestMeshOffRendersNothingOfIstio(t *testing.T) {
	for name, c := range map[string]*v1alpha1.NatsCluster{
		"no mesh":    cluster(),
		"empty mesh": cluster(func(c *v1alpha1.NatsCluster) { c.Spec.Mesh = &v1alpha1.MeshSpec{} }),
	} {
		t.Run(name, func(t *testing.T) {
			objs := renderObjects(t, c, render.Inputs{NativeSidecars: ptr.To(true)})
			equal(t, "PeerAuthentications", count[*securityv1.PeerAuthentication](objs), 0)
			pt := statefulSetOf(t, c, render.Inputs{NativeSidecars: ptr.To(true)}).Spec.Template
			for k := range maps.Collect(func(yield func(string, string) bool) {
				for k, v := range pt.Labels {
					yield(k, v)
				}
				for k, v := range pt.Annotations {
					yield(k, v)
				}
			}) {
				if strings.Contains(k, "istio.io") {
					t.Errorf("pod template carries %s without spec.mesh.istio", k)
				}
			}
		})
	}
}

// TestMeshPodTemplate: a meshed pod asks for its sidecar and a proxy that
// is up before nats-server; a classic sidecar (or one Istio chooses)
// drains no sooner than lame duck ends, within the pod's grace period; a
// native one stops after nats-server anyway and keeps Istio's drain.
func TestMeshPodTemplate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		native     *bool
		wantNative string // "" absent
	}{
		{"native sidecars unknown: Istio decides", nil, ""},
		{"native sidecars supported", ptr.To(true), "true"},
		{"native sidecars not supported", ptr.To(false), "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt := statefulSetOf(t, cluster(withMesh("")), render.Inputs{NativeSidecars: tc.native}).Spec.Template
			equal(t, "inject label", pt.Labels[render.LabelIstioInject], "true")
			got, ok := pt.Annotations[render.AnnotationIstioNativeSidecar]
			equal(t, "native sidecar annotation", got, tc.wantNative)
			equal(t, "native sidecar annotation present", ok, tc.wantNative != "")
			var cfg struct {
				Hold  bool   `json:"holdApplicationUntilProxyStarts"`
				Drain string `json:"terminationDrainDuration"`
			}
			if err := json.Unmarshal([]byte(pt.Annotations[render.AnnotationIstioProxyConfig]), &cfg); err != nil {
				t.Fatalf("%s: %v", render.AnnotationIstioProxyConfig, err)
			}
			equal(t, "holdApplicationUntilProxyStarts", cfg.Hold, true)
			if tc.wantNative == "true" {
				equal(t, "terminationDrainDuration of a native sidecar", cfg.Drain, "")
				return
			}
			drain, err := time.ParseDuration(cfg.Drain)
			if err != nil {
				t.Fatalf("terminationDrainDuration %q: %v", cfg.Drain, err)
			}
			if lameDuck := render.LameDuckGracePeriod + render.LameDuckDuration; drain < lameDuck+5*time.Second {
				t.Errorf("drain %s, want at least lame duck's %s plus a margin", drain, lameDuck)
			}
			if grace := time.Duration(*pt.Spec.TerminationGracePeriodSeconds) * time.Second; grace <= drain {
				t.Errorf("terminationGracePeriodSeconds %s, want more than the drain %s", grace, drain)
			}
		})
	}
}

// TestMeshAppNeverRunsAsTheProxyUser: iptables lets UID 1337's traffic
// bypass the sidecar.
func TestMeshAppNeverRunsAsTheProxyUser(t *testing.T) {
	spec := statefulSetOf(t, cluster(withMesh("")), render.Inputs{}).Spec.Template.Spec
	if u := ptr.Deref(spec.SecurityContext.RunAsUser, 0); u == render.IstioProxyUID || u == 0 {
		t.Errorf("pod runs as %d", u)
	}
	for _, c := range spec.Containers {
		if c.SecurityContext != nil && ptr.Deref(c.SecurityContext.RunAsUser, 1) == render.IstioProxyUID {
			t.Errorf("container %s runs as %d", c.Name, render.IstioProxyUID)
		}
	}
}

// TestMeshServicesDeclareEveryPort: Istio matches only declared ports, and
// must not have to sniff a server-first protocol.
func TestMeshServicesDeclareEveryPort(t *testing.T) {
	objs := renderObjects(t, cluster(withMesh("")), render.Inputs{})
	want := map[string][]string{"demo": {"nats"}, "demo-headless": {"nats", "cluster", "monitor"}}
	for svcName, ports := range want {
		svc := find[*corev1.Service](t, objs, svcName)
		got := map[string]corev1.ServicePort{}
		for _, p := range svc.Spec.Ports {
			got[p.Name] = p
		}
		for _, name := range ports {
			p, ok := got[name]
			if !ok || p.Protocol != corev1.ProtocolTCP || ptr.Deref(p.AppProtocol, "") == "" {
				t.Errorf("Service %s port %s: %+v (present %v), want TCP with an appProtocol", svcName, name, p, ok)
			}
		}
	}
}

// TestMeshStage: the controller's stage decides, not the spec alone.
func TestMeshStage(t *testing.T) {
	for _, tc := range []struct {
		name         string
		in           *v1alpha1.NatsCluster
		stage        *render.MeshStage
		wantSidecars bool
		wantPolicy   string
	}{
		{"spec Strict, no stage: the end state", cluster(withMesh("")), nil, true, "STRICT"},
		{"spec Permissive, no stage", cluster(withMesh(v1alpha1.MeshMTLSPermissive)), nil, true, "PERMISSIVE"},
		{"policy first, sidecars later", cluster(withMesh("")), &render.MeshStage{Policy: "PERMISSIVE"}, false, "PERMISSIVE"},
		{"turned off, sidecars still in", cluster(), &render.MeshStage{Sidecars: true, Policy: "PERMISSIVE"}, true, "PERMISSIVE"},
		{"turned off, done", cluster(), &render.MeshStage{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderObjects(t, tc.in, render.Inputs{Mesh: tc.stage})
			sts := statefulSetOf(t, tc.in, render.Inputs{Mesh: tc.stage})
			equal(t, "sidecars", sts.Spec.Template.Labels[render.LabelIstioInject] == "true", tc.wantSidecars)
			pas := count[*securityv1.PeerAuthentication](objs)
			equal(t, "policies", pas, map[bool]int{true: 1, false: 0}[tc.wantPolicy != ""])
			if tc.wantPolicy != "" {
				equal(t, "mode", find[*securityv1.PeerAuthentication](t, objs, "demo").Spec.Mtls.Mode.String(), tc.wantPolicy)
			}
		})
	}
}

// TestPeerAuthenticationSelectsOnlyItsCluster: never a namespace- or
// mesh-wide policy, never another cluster's pods, never a namesake's
// (a Helm release of the same name carries the same name and instance
// labels: the careless selector without managed-by, main before issue 17,
// matches its pods and loosens their mTLS).
func TestPeerAuthenticationSelectsOnlyItsCluster(t *testing.T) {
	a := cluster(named("a"), withMesh(""))
	b := cluster(named("b"), withMesh(""))
	pa := render.PeerAuthentication(a.WithDefaults(), render.MeshStage{Policy: "STRICT"})
	equal(t, "name", pa.Name, "a")
	equal(t, "namespace", pa.Namespace, "ns")
	if pa.Spec.Selector == nil || len(pa.Spec.Selector.MatchLabels) == 0 {
		t.Fatal("no selector: the policy would cover the whole namespace")
	}
	equal(t, "selector", maps.Equal(pa.Spec.Selector.MatchLabels, render.ManagedSelectorLabels(a)), true)
	sel := labels.SelectorFromSet(pa.Spec.Selector.MatchLabels)
	for _, c := range []struct {
		name string
		pod  map[string]string
		want bool
	}{
		{"its own pods", statefulSetOf(t, a, render.Inputs{}).Spec.Template.Labels, true},
		{"another cluster's pods", statefulSetOf(t, b, render.Inputs{}).Spec.Template.Labels, false},
		{"a Helm release of the same name", helmPodLabels("a"), false},
	} {
		equal(t, c.name, sel.Matches(labels.Set(c.pod)), c.want)
	}
}

// TestPeerAuthenticationMonitorException: the monitor port is PERMISSIVE
// under STRICT only when spec.mesh.istio.monitorPermissive asks; by
// default the policy has no port-level setting and the platform's STRICT
// holds on 8222 too. Catches the careless variant of main before issue
// 17, which always rendered the exception.
func TestPeerAuthenticationMonitorException(t *testing.T) {
	for _, tc := range []struct {
		name  string
		asked bool
	}{
		{"not asked: no exception", false},
		{"asked: 8222 PERMISSIVE", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(withMesh(""), func(c *v1alpha1.NatsCluster) { c.Spec.Mesh.Istio.MonitorPermissive = tc.asked })
			for _, stage := range []string{"STRICT", "PERMISSIVE"} {
				pa := render.PeerAuthentication(c.WithDefaults(), render.MeshStage{Policy: stage})
				got := pa.Spec.PortLevelMtls[render.MonitorPort]
				if !tc.asked {
					equal(t, stage+": port-level settings", len(pa.Spec.PortLevelMtls), 0)
					continue
				}
				if got == nil || got.Mode.String() != "PERMISSIVE" {
					t.Errorf("%s: monitor port mode = %v, want PERMISSIVE", stage, got)
				}
				equal(t, stage+": port-level settings", len(pa.Spec.PortLevelMtls), 1)
			}
		})
	}
}

// helmPodLabels are the labels the official NATS chart gives the pods of
// release name: the same app.kubernetes.io/name and instance as ours.
func helmPodLabels(name string) map[string]string {
	return map[string]string{
		render.LabelName: "nats", render.LabelInstance: name, render.LabelComponent: "server",
		render.LabelManagedBy: "Helm", "helm.sh/chart": "nats-1.3.0",
	}
}

// TestPeerAuthenticationManifest: the object as applied and printed, in
// Istio's field names and enum spellings.
func TestPeerAuthenticationManifest(t *testing.T) {
	c := cluster(withMesh("")).WithDefaults()
	u, err := manifest.Unstructured(render.PeerAuthentication(c, render.MeshStage{Policy: "STRICT", RolledBackGeneration: 4}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"apiVersion: security.istio.io/v1", "kind: PeerAuthentication",
		"mtls:\n    mode: STRICT",
		"selector:\n    matchLabels:\n      app.kubernetes.io/instance: demo\n      app.kubernetes.io/managed-by: kubenats\n      app.kubernetes.io/name: nats",
		"kubenats.io/mesh-rolled-back-generation: \"4\"",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("manifest lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "portLevelMtls") {
		t.Errorf("manifest carries a port-level exception nobody asked for:\n%s", out)
	}
	if strings.Contains(string(out), "status") {
		t.Errorf("manifest carries a status:\n%s", out)
	}
}
