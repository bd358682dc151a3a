package natscluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/internal/render"
)

// TestRestartsForTheRenderedTemplate: a pod whose restart annotations
// differ from the template just rendered is left to the rollout, however
// the StatefulSet's status names its revision. The variant it replaces
// (the revision label alone) reloaded a server in the moment between a
// restart-only change being applied and the StatefulSet controller seeing
// it: in mode jwt, that reload refused a client's creds once in CI.
func TestRestartsForTheRenderedTemplate(t *testing.T) {
	template := map[string]string{render.AnnotationConfigHash: "new", render.AnnotationRouteTLS: "true", "team.example/owner": "x"}
	pod := func(a map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"the template's annotations", pod(map[string]string{render.AnnotationConfigHash: "new", render.AnnotationRouteTLS: "true", "team.example/owner": "x"}), false},
		{"an older config hash", pod(map[string]string{render.AnnotationConfigHash: "old", render.AnnotationRouteTLS: "true"}), true},
		{"another route mode", pod(map[string]string{render.AnnotationConfigHash: "new", render.AnnotationRouteTLS: "open"}), true},
		{"more annotations than the template", pod(map[string]string{render.AnnotationConfigHash: "new", render.AnnotationRouteTLS: "true", "sidecar.istio.io/status": "{}"}), false},
		{"a user's annotation changed (not the operator's to judge)", pod(map[string]string{render.AnnotationConfigHash: "new", render.AnnotationRouteTLS: "true", "team.example/owner": "y"}), false},
	} {
		if got := restartsFor(tc.pod, template); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if restartsFor(pod(nil), nil) {
		t.Error("no template rendered (a pass that stopped short): nothing is judged outdated by it")
	}
}
