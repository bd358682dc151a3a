package render_test

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func podSpecOf(t *testing.T, c *v1alpha1.NatsCluster) corev1.PodSpec {
	t.Helper()
	return statefulSetOf(t, c, render.Inputs{}).Spec.Template.Spec
}

// TestPodHardening checks the pod and every container in every mode that
// changes the containers.
func TestPodHardening(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
	}{
		{"defaults", cluster()},
		{"JetStream off", cluster(withJetStream(false))},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken))},
		{"none, one server", cluster(withAuthMode(v1alpha1.AuthNone), withReplicas(1))},
		{"user resources and image", cluster(withImage("registry.example/nats:custom"), withResources(corev1.ResourceRequirements{}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := podSpecOf(t, tc.in)
			psc := spec.SecurityContext
			if psc == nil {
				t.Fatal("pod has no security context")
			}
			equal(t, "pod runAsNonRoot", ptr.Deref(psc.RunAsNonRoot, false), true)
			equal(t, "pod runAsUser", ptr.Deref(psc.RunAsUser, 0), int64(65532))
			equal(t, "pod runAsUser constant", int64(render.RunAsUser), int64(65532))
			if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod seccomp = %+v, want RuntimeDefault", psc.SeccompProfile)
			}
			equal(t, "automountServiceAccountToken", ptr.Deref(spec.AutomountServiceAccountToken, true), false)
			equal(t, "hostNetwork", spec.HostNetwork, false)
			equal(t, "hostPID", spec.HostPID, false)

			ctrs := allContainers(spec)
			if len(ctrs) != 1 {
				t.Fatalf("%d containers, want the server alone", len(ctrs))
			}
			for _, ctr := range ctrs {
				sc := ctr.SecurityContext
				if sc == nil {
					t.Errorf("container %s has no security context", ctr.Name)
					continue
				}
				equal(t, ctr.Name+" runAsNonRoot", ptr.Deref(sc.RunAsNonRoot, false), true)
				if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
					t.Errorf("container %s runs as root", ctr.Name)
				}
				equal(t, ctr.Name+" readOnlyRootFilesystem", ptr.Deref(sc.ReadOnlyRootFilesystem, false), true)
				equal(t, ctr.Name+" allowPrivilegeEscalation", ptr.Deref(sc.AllowPrivilegeEscalation, true), false)
				equal(t, ctr.Name+" privileged", ptr.Deref(sc.Privileged, false), false)
				if sc.Capabilities == nil || fmt.Sprint(sc.Capabilities.Drop) != "[ALL]" || len(sc.Capabilities.Add) != 0 {
					t.Errorf("container %s capabilities = %+v, want drop [ALL] and add nothing", ctr.Name, sc.Capabilities)
				}
				if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("container %s seccomp = %+v, want RuntimeDefault", ctr.Name, sc.SeccompProfile)
				}
			}
		})
	}
}

// TestPodWritableVolumesAreBounded: every emptyDir (the pid directory is
// the one writable place of a read-only root filesystem) has a small size
// limit, so that an image that is not nats-server cannot fill the node's
// disk through it. Careless variant caught: today's main, whose pid
// emptyDir had no sizeLimit.
func TestPodWritableVolumesAreBounded(t *testing.T) {
	for _, in := range []*v1alpha1.NatsCluster{cluster(), cluster(withImage("registry.example/nats:custom"), withReplicas(1))} {
		spec := podSpecOf(t, in)
		var found int
		for _, v := range spec.Volumes {
			ed := v.EmptyDir
			if ed == nil {
				continue
			}
			found++
			if ed.SizeLimit == nil || ed.SizeLimit.IsZero() || ed.SizeLimit.Cmp(resource.MustParse("16Mi")) > 0 {
				t.Errorf("emptyDir %s sizeLimit %v, want a small limit", v.Name, ed.SizeLimit)
			}
		}
		if found == 0 {
			t.Error("no emptyDir: where does the pid file go?")
		}
	}
}

// TestPodServiceAccount ties the pod to the ServiceAccount Objects renders.
func TestPodServiceAccount(t *testing.T) {
	objs := renderObjects(t, cluster(), render.Inputs{})
	sa := find[*corev1.ServiceAccount](t, objs, "demo")
	sts := statefulSetOf(t, cluster(), render.Inputs{})
	equal(t, "serviceAccountName", sts.Spec.Template.Spec.ServiceAccountName, sa.Name)
	equal(t, "ServiceAccount automount", ptr.Deref(sa.AutomountServiceAccountToken, true), false)
}

// TestPodTerminationOutlastsLameDuck: the kubelet must not kill the server
// before lame duck mode has moved its clients away.
func TestPodTerminationOutlastsLameDuck(t *testing.T) {
	grace := ptr.Deref(podSpecOf(t, cluster()).TerminationGracePeriodSeconds, 30)
	lameDuck := int64((render.LameDuckGracePeriod + render.LameDuckDuration).Seconds())
	if grace < lameDuck+20 {
		t.Errorf("terminationGracePeriodSeconds = %d, want at least %d (lame duck grace period + duration + 20 s)", grace, lameDuck+20)
	}
	if grace < int64(render.LameDuckGracePeriod.Seconds())+20 {
		t.Errorf("terminationGracePeriodSeconds = %d, below lame duck grace period + 20 s", grace)
	}
}

// TestPodSharesNoProcessNamespace: nothing in the pod may see the server's
// processes or read its environment; the operator reloads it over NATS.
func TestPodSharesNoProcessNamespace(t *testing.T) {
	spec := podSpecOf(t, cluster())
	equal(t, "shareProcessNamespace", ptr.Deref(spec.ShareProcessNamespace, false), false)
	for _, ctr := range allContainers(spec) {
		if ctr.Name != render.ServerContainerName {
			t.Errorf("container %s beside the server", ctr.Name)
		}
	}
}

func TestPodTemplatePassthrough(t *testing.T) {
	tolerations := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "nats", Effect: corev1.TaintEffectNoSchedule}}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
		}}},
	}}}
	pullSecrets := []corev1.LocalObjectReference{{Name: "regcred"}}
	pt := v1alpha1.PodTemplateSpec{
		Labels:            map[string]string{"team": "messaging"},
		Annotations:       map[string]string{"prometheus.io/scrape": "true"},
		NodeSelector:      map[string]string{"pool": "nats"},
		Tolerations:       tolerations,
		Affinity:          affinity,
		PriorityClassName: "critical",
		ImagePullSecrets:  pullSecrets,
	}
	c := cluster(withPodTemplate(pt))
	tmpl := statefulSetOf(t, c, render.Inputs{}).Spec.Template
	spec := tmpl.Spec

	for _, tc := range []struct {
		field     string
		got, want any
	}{
		{"label team", tmpl.Labels["team"], "messaging"},
		{"annotation prometheus.io/scrape", tmpl.Annotations["prometheus.io/scrape"], "true"},
		{"nodeSelector", spec.NodeSelector, pt.NodeSelector},
		{"tolerations", spec.Tolerations, tolerations},
		{"affinity", spec.Affinity, affinity},
		{"priorityClassName", spec.PriorityClassName, "critical"},
		{"imagePullSecrets", spec.ImagePullSecrets, pullSecrets},
	} {
		t.Run(tc.field, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("%s = %v, want %v", tc.field, tc.got, tc.want)
			}
		})
	}
	t.Run("operator labels kept", func(t *testing.T) {
		for k, v := range render.SelectorLabels(c) {
			equal(t, "label "+k, tmpl.Labels[k], v)
		}
		equal(t, "managed-by", tmpl.Labels[render.LabelManagedBy], render.ManagedBy)
		equal(t, "version", tmpl.Labels[render.LabelVersion], v1alpha1.DefaultVersion)
	})
	t.Run("config hash kept beside user annotations", func(t *testing.T) {
		if tmpl.Annotations[render.AnnotationConfigHash] == "" {
			t.Errorf("annotations %v lack %s", tmpl.Annotations, render.AnnotationConfigHash)
		}
	})
}

// TestPodTemplateUnsetFieldsStayUnset: nothing the user left out appears.
func TestPodTemplateUnsetFieldsStayUnset(t *testing.T) {
	spec := podSpecOf(t, cluster())
	if spec.NodeSelector != nil || spec.Tolerations != nil || spec.Affinity != nil || spec.PriorityClassName != "" || spec.ImagePullSecrets != nil {
		t.Errorf("unset podTemplate produced nodeSelector %v, tolerations %v, affinity %v, priorityClassName %q, imagePullSecrets %v",
			spec.NodeSelector, spec.Tolerations, spec.Affinity, spec.PriorityClassName, spec.ImagePullSecrets)
	}
}

func TestPodTopologySpread(t *testing.T) {
	user := []corev1.TopologySpreadConstraint{{
		MaxSkew:           2,
		TopologyKey:       "topology.kubernetes.io/zone",
		WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": "demo"}},
	}}
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want []corev1.TopologySpreadConstraint
	}{
		{"default spreads over zones, then hostnames, preferred", cluster(), []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       "topology.kubernetes.io/zone",
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: render.SelectorLabels(cluster())},
		}, {
			MaxSkew:           1,
			TopologyKey:       "kubernetes.io/hostname",
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: render.SelectorLabels(cluster())},
		}}},
		{"the user's list replaces the default", cluster(withPodTemplate(v1alpha1.PodTemplateSpec{TopologySpreadConstraints: user})), user},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := podSpecOf(t, tc.in).TopologySpreadConstraints
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("topologySpreadConstraints = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPodAnnotationsHashes(t *testing.T) {
	for _, tc := range []struct {
		name            string
		in              render.Inputs
		wantCredentials string // "" means absent
	}{
		{"no credentials hash", render.Inputs{}, ""},
		{"credentials hash", render.Inputs{CredentialsHash: "abc123"}, "abc123"},
		{"a config hash passed in is replaced", render.Inputs{ConfigHash: "stale"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ann := statefulSetOf(t, cluster(), tc.in).Spec.Template.Annotations
			got, ok := ann[render.AnnotationCredentialsHash]
			equal(t, "credentials hash present", ok, tc.wantCredentials != "")
			equal(t, "credentials hash", got, tc.wantCredentials)
			if h := ann[render.AnnotationConfigHash]; h == "" || h == "stale" {
				t.Errorf("config hash = %q, want the rendered restart hash", h)
			}
		})
	}
}

// TestPodLabelsAreNotShared: the pod labels are a map of their own, so the
// StatefulSet's labels and selector do not change with them.
func TestPodLabelsAreNotShared(t *testing.T) {
	c := cluster(withPodTemplate(v1alpha1.PodTemplateSpec{Labels: map[string]string{"team": "a"}}))
	sts := statefulSetOf(t, c, render.Inputs{})
	before := maps.Clone(sts.Labels)
	selector := maps.Clone(sts.Spec.Selector.MatchLabels)
	sts.Spec.Template.Labels["mutated"] = "yes"
	if !maps.Equal(sts.Labels, before) || !maps.Equal(sts.Spec.Selector.MatchLabels, selector) {
		t.Errorf("changing the pod labels changed the StatefulSet labels %v or selector %v", sts.Labels, sts.Spec.Selector.MatchLabels)
	}
	if _, ok := sts.Labels["team"]; ok {
		t.Errorf("the StatefulSet got the pod's user label: %v", sts.Labels)
	}
}
