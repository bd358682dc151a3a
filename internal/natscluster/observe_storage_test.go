package natscluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func TestStorageEvent(t *testing.T) {
	cond := func(s metav1.ConditionStatus, reason string) *metav1.Condition {
		return &metav1.Condition{Type: v1alpha1.ConditionStorageAvailable, Status: s, Reason: reason}
	}
	room := cond(metav1.ConditionTrue, v1alpha1.ReasonStorageAvailable)
	full := cond(metav1.ConditionFalse, v1alpha1.ReasonStoreFull)
	off := cond(metav1.ConditionFalse, v1alpha1.ReasonJetStreamDisabled)
	unknown := cond(metav1.ConditionUnknown, v1alpha1.ReasonStorageUnknown)
	for _, tc := range []struct {
		name     string
		was, now *metav1.Condition
		want     string // "" is no event
	}{
		{"first look, room", nil, room, ""},
		{"first look, full", nil, full, corev1.EventTypeWarning},
		{"fills up", room, full, corev1.EventTypeWarning},
		{"stays full", full, full, ""},
		{"full, then JetStream off", full, off, corev1.EventTypeWarning},
		{"room again", full, room, corev1.EventTypeNormal},
		{"servers start", unknown, room, ""},
		{"servers stop answering", room, unknown, ""},
		{"JetStream turned off in the spec", full, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := storageEvent(tc.was, tc.now)
			if ok != (tc.want != "") || got != tc.want {
				t.Fatalf("storageEvent = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}
