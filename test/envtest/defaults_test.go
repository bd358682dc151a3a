package envtest_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestDefaultsAgreeWithWithDefaults proves that the CRD's default markers,
// which the API server applies, and WithDefaults, which `kubenats render`
// applies for want of an API server, give the same spec.
func TestDefaultsAgreeWithWithDefaults(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsClusterSpec
	cases := []struct {
		name string
		edit func(*spec)
	}{
		{name: "empty"},
		{name: "secretref-without-key-and-storageclass-only", edit: func(s *spec) {
			s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "creds"}
			s.JetStream.FileStore.StorageClassName = ptr.To("fast")
		}},
		{name: "token-mode-with-key", edit: func(s *spec) {
			s.Auth.Mode = v1alpha1.AuthToken
			s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "creds", Key: "token"}
		}},
		{name: "mesh-istio-without-mtls", edit: func(s *spec) {
			s.Mesh = &v1alpha1.MeshSpec{Istio: &v1alpha1.IstioMeshSpec{}}
		}},
		{name: "jetstream-off-two-replicas", edit: func(s *spec) {
			s.Replicas = ptr.To[int32](2)
			s.JetStream.Enabled = ptr.To(false)
		}},
		{name: "every-defaulted-field-set", edit: func(s *spec) {
			s.Replicas = ptr.To[int32](5)
			s.Version = "2.14.0"
			s.Auth.Mode = v1alpha1.AuthNone
			s.JetStream.Enabled = ptr.To(true)
			s.JetStream.FileStore.Size = quantity("20Gi")
			s.JetStream.FileStore.PVCRetentionPolicy = v1alpha1.PVCDelete
		}},
		{name: "other-fields-untouched", edit: func(s *spec) {
			s.Service.Type = "LoadBalancer"
			s.Service.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
			s.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: *quantity("1Gi")}
			s.JetStream.Domain = "hub"
			s.JetStream.AllowedNamespaces = []string{"team-a"}
			s.PodTemplate.Labels = map[string]string{"team": "a"}
			s.PodTemplate.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
			s.Config = map[string]apiextensionsv1.JSON{"max_payload": rawJSON("1048576")}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var edits []func(*spec)
			if tc.edit != nil {
				edits = append(edits, tc.edit)
			}
			sent := natsCluster(ns, tc.name, edits...)
			want := (&v1alpha1.NatsCluster{Spec: *sent.Spec.DeepCopy()}).WithDefaults().Spec

			if err := k8s.Create(ctx(t), sent.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.NatsCluster{}
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sent), got); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Spec, want) {
				t.Errorf("the API server's defaults and WithDefaults disagree\nAPI server:   %s\nWithDefaults: %s",
					asJSON(t, got.Spec), asJSON(t, want))
			}
		})
	}
}

// A manifest may have no spec at all. Its defaults must still be the ones
// WithDefaults gives an empty spec: the CRD declares no default for spec
// itself, so the API server would default nothing below it.
func TestDefaultsAgreeWithWithDefaultsWithoutSpec(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "NatsCluster",
		"metadata":   map[string]any{"namespace": ns, "name": "no-spec-key"},
	}}
	if err := k8s.Create(ctx(t), u); err != nil {
		t.Fatalf("a NatsCluster without spec refused: %v", err)
	}
	got := &v1alpha1.NatsCluster{}
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	want := (&v1alpha1.NatsCluster{}).WithDefaults().Spec
	if !equality.Semantic.DeepEqual(got.Spec, want) {
		t.Errorf("the API server's defaults and WithDefaults disagree for a NatsCluster without spec\nAPI server:   %s\nWithDefaults: %s",
			asJSON(t, got.Spec), asJSON(t, want))
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
