package usersecrets

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestUsableSecret(t *testing.T) {
	allowed := map[string]string{v1alpha1.SecretAllowLabel: "true"}
	secret := func(typ corev1.SecretType, labels map[string]string, edits ...func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: labels}, Type: typ}
		for _, e := range edits {
			e(s)
		}
		return s
	}
	ownedByCluster := func(s *corev1.Secret) {
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster", Name: "nats", UID: "u", Controller: ptr.To(true)}}
	}
	ownedByOther := func(s *corev1.Secret) {
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Name: "c", UID: "u", Controller: ptr.To(true)}}
	}
	tests := []struct {
		name   string
		secret *corev1.Secret
		want   bool
	}{
		{"opaque, opted in", secret(corev1.SecretTypeOpaque, allowed), true},
		{"no type, opted in", secret("", allowed), true},
		{"tls, opted in", secret(corev1.SecretTypeTLS, allowed), true},
		{"tls made by cert-manager, opted in", secret(corev1.SecretTypeTLS, allowed, ownedByOther), true},
		{"opaque, no label", secret(corev1.SecretTypeOpaque, nil), false},
		{"label false", secret(corev1.SecretTypeOpaque, map[string]string{v1alpha1.SecretAllowLabel: "false"}), false},
		{"label True", secret(corev1.SecretTypeOpaque, map[string]string{v1alpha1.SecretAllowLabel: "True"}), false},
		{"service-account token, opted in", secret(corev1.SecretTypeServiceAccountToken, allowed), false},
		{"registry credentials, opted in", secret(corev1.SecretTypeDockerConfigJson, allowed), false},
		{"basic auth, opted in", secret(corev1.SecretTypeBasicAuth, allowed), false},
		{"bootstrap token, opted in", secret(corev1.SecretTypeBootstrapToken, allowed), false},
		{"a foreign type, opted in", secret("example.com/vault", allowed), false},
		{"made by kubenats, labelled so, opted in", secret(corev1.SecretTypeOpaque, map[string]string{
			v1alpha1.SecretAllowLabel: "true", render.LabelManagedBy: render.ManagedBy}), false},
		{"controlled by a NatsCluster, opted in", secret(corev1.SecretTypeOpaque, allowed, ownedByCluster), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Usable(tt.secret); got != tt.want {
				t.Fatalf("Usable = %v, want %v", got, tt.want)
			}
		})
	}
}

// The refusal names the field and the Secret the user wrote, and nothing
// the Secret holds.
func TestSecretRefusalNamesOnlyWhatTheUserWrote(t *testing.T) {
	msg := Refusal("spec.auth.secretRef", "db-password")
	for _, want := range []string{"spec.auth.secretRef", `"db-password"`, v1alpha1.SecretAllowLabel} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not mention %s", msg, want)
		}
	}
}
