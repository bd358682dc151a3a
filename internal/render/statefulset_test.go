package render_test

import (
	"fmt"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestStatefulSetReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want int32
	}{
		{"unset means 3", cluster(), 3},
		{"1", cluster(withReplicas(1)), 1},
		{"3", cluster(withReplicas(3)), 3},
		{"5", cluster(withReplicas(5)), 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := statefulSetOf(t, tc.in, render.Inputs{})
			equal(t, "replicas", ptr.Deref(sts.Spec.Replicas, -1), tc.want)
		})
	}
}

func TestStatefulSetShape(t *testing.T) {
	c := cluster()
	sts := statefulSetOf(t, c, render.Inputs{})
	equal(t, "podManagementPolicy", sts.Spec.PodManagementPolicy, appsv1.ParallelPodManagement)
	equal(t, "serviceName", sts.Spec.ServiceName, "demo-headless")
	equal(t, "updateStrategy", sts.Spec.UpdateStrategy.Type, appsv1.OnDeleteStatefulSetStrategyType)
	equal(t, "name", sts.Name, "demo")
	equal(t, "namespace", sts.Namespace, "ns")
	equal(t, "kind", sts.Kind, "StatefulSet")
	equal(t, "apiVersion", sts.APIVersion, "apps/v1")
	if sts.Spec.Selector == nil || !maps.Equal(sts.Spec.Selector.MatchLabels, render.SelectorLabels(c)) || len(sts.Spec.Selector.MatchExpressions) != 0 {
		t.Fatalf("selector = %+v, want exactly %v", sts.Spec.Selector, render.SelectorLabels(c))
	}
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(sts.Spec.Template.Labels)) {
		t.Errorf("selector %s does not match the pod labels %v", sel, sts.Spec.Template.Labels)
	}
}

// TestStatefulSetSelectorIgnoresSpec: the selector is immutable, so no spec
// field may change it.
func TestStatefulSetSelectorIgnoresSpec(t *testing.T) {
	want := statefulSetOf(t, cluster(), render.Inputs{}).Spec.Selector.MatchLabels
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
	}{
		{"version", cluster(withVersion("2.16.0"))},
		{"pod labels", cluster(withPodTemplate(v1alpha1.PodTemplateSpec{Labels: map[string]string{"team": "a"}}))},
		{"JetStream off", cluster(withJetStream(false))},
		{"auth mode", cluster(withAuthMode(v1alpha1.AuthNone))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statefulSetOf(t, tc.in, render.Inputs{}).Spec.Selector.MatchLabels
			if !maps.Equal(got, want) {
				t.Errorf("selector = %v, want %v", got, want)
			}
		})
	}
}

func TestStatefulSetClaimRetention(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want appsv1.PersistentVolumeClaimRetentionPolicyType // "" means no policy
	}{
		{"unset means Retain", cluster(), appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{"Retain", cluster(withPVCRetention(v1alpha1.PVCRetain)), appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{"Delete", cluster(withPVCRetention(v1alpha1.PVCDelete)), appsv1.DeletePersistentVolumeClaimRetentionPolicyType},
		{"JetStream off has no claims to keep", cluster(withJetStream(false), withPVCRetention(v1alpha1.PVCDelete)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := statefulSetOf(t, tc.in, render.Inputs{}).Spec.PersistentVolumeClaimRetentionPolicy
			if tc.want == "" {
				if p != nil {
					t.Errorf("retention policy = %+v, want none", p)
				}
				return
			}
			if p == nil {
				t.Fatal("no retention policy")
			}
			equal(t, "whenDeleted", p.WhenDeleted, tc.want)
			equal(t, "whenScaled", p.WhenScaled, tc.want)
		})
	}
}

func TestStatefulSetClaimTemplate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        *v1alpha1.NatsCluster
		wantSize  string // "" means no claim template
		wantClass *string
	}{
		{"default size, default class", cluster(), "10Gi", nil},
		{"size", cluster(withFileStoreSize("100Gi")), "100Gi", nil},
		{"storage class", cluster(withStorageClass("fast-ssd")), "10Gi", ptr.To("fast-ssd")},
		{"JetStream off", cluster(withJetStream(false), withFileStoreSize("100Gi")), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := statefulSetOf(t, tc.in, render.Inputs{})
			if tc.wantSize == "" {
				if len(sts.Spec.VolumeClaimTemplates) != 0 {
					t.Errorf("%d claim templates, want none", len(sts.Spec.VolumeClaimTemplates))
				}
				return
			}
			if len(sts.Spec.VolumeClaimTemplates) != 1 {
				t.Fatalf("%d claim templates, want 1", len(sts.Spec.VolumeClaimTemplates))
			}
			claim := sts.Spec.VolumeClaimTemplates[0]
			equal(t, "name", claim.Name, v1alpha1.DataVolumeName)
			equal(t, "name is data", claim.Name, "data")
			equal(t, "apiVersion", claim.APIVersion, "v1")
			equal(t, "kind", claim.Kind, "PersistentVolumeClaim")
			size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
			if size.Cmp(resource.MustParse(tc.wantSize)) != 0 {
				t.Errorf("storage request = %s, want %s", size.String(), tc.wantSize)
			}
			equal(t, "storageClassName", fmt.Sprint(ptr.Deref(claim.Spec.StorageClassName, "<nil>")), fmt.Sprint(ptr.Deref(tc.wantClass, "<nil>")))
			equal(t, "accessModes", fmt.Sprint(claim.Spec.AccessModes), fmt.Sprint([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}))
			equal(t, "volumeMode", ptr.Deref(claim.Spec.VolumeMode, ""), corev1.PersistentVolumeFilesystem)
		})
	}
}

// TestStatefulSetDataMount checks that the claim is mounted where nats.conf
// stores JetStream's data, and nowhere without JetStream.
func TestStatefulSetDataMount(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want bool
	}{
		{"JetStream on", cluster(), true},
		{"JetStream off", cluster(withJetStream(false)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctr := serverContainerOf(t, tc.in)
			found := false
			for _, m := range ctr.VolumeMounts {
				if m.Name == v1alpha1.DataVolumeName {
					found = true
					equal(t, "data mount path", m.MountPath, render.StoreDir)
					equal(t, "data mount read-only", m.ReadOnly, false)
				}
			}
			equal(t, "data mounted", found, tc.want)
		})
	}
}
