package jobs

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRunningPodIP: the pod asked for progress is one that runs now, with
// an address; of a retry beside a pod not yet reported ended, the newer.
// Careless variant watched failing: the first running pod listed taken
// (the older of two).
func TestRunningPodIP(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(1_800_000_000+int64(s), 0)) }
	pod := func(phase corev1.PodPhase, ip string, created int, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(created)}, Status: corev1.PodStatus{Phase: phase, PodIP: ip}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: at(created + 5).Time}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"no pod yet", nil, ""},
		{"pending, no address", []corev1.Pod{pod(corev1.PodPending, "", 0, false)}, ""},
		{"running", []corev1.Pod{pod(corev1.PodRunning, "10.0.0.7", 0, false)}, "10.0.0.7"},
		{"running without an address yet", []corev1.Pod{pod(corev1.PodRunning, "", 0, false)}, ""},
		{"ended", []corev1.Pod{pod(corev1.PodFailed, "10.0.0.7", 0, false), pod(corev1.PodSucceeded, "10.0.0.8", 1, false)}, ""},
		{"a retry after a failed try", []corev1.Pod{pod(corev1.PodFailed, "10.0.0.7", 0, false), pod(corev1.PodRunning, "10.0.0.9", 9, false)}, "10.0.0.9"},
		{"two running: the newer", []corev1.Pod{pod(corev1.PodRunning, "10.0.0.7", 0, false), pod(corev1.PodRunning, "10.0.0.9", 9, false)}, "10.0.0.9"},
		{"one being deleted", []corev1.Pod{pod(corev1.PodRunning, "10.0.0.9", 9, true), pod(corev1.PodRunning, "10.0.0.7", 0, false)}, "10.0.0.7"},
	} {
		ip, ok := RunningPodIP(tc.pods)
		if ip != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %q, %v; want %q", tc.name, ip, ok, tc.want)
		}
	}
}
