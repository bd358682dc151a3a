package natscluster

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodTrouble(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-time.Minute))
	pod := func(edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nats-2", CreationTimestamp: created}}
		edit(p)
		return p
	}
	waiting := func(name, reason, message string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: name,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}})
		}
	}
	notReadySince := func(at time.Time) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(at)})
		}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // "" none; else a part of the message
	}{
		{"just created", pod(func(*corev1.Pod) {}), ""},
		{"creating its containers", pod(waiting("nats", "ContainerCreating", "")), ""},
		{"unschedulable", pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."}}
		}), "Unschedulable: 0/1 nodes are available"},
		{"image not found", pod(waiting("nats", "ErrImagePull", "manifest unknown")), "container nats: ErrImagePull: manifest unknown"},
		{"image back-off", pod(waiting("nats", "ImagePullBackOff", "Back-off pulling image")), "ImagePullBackOff"},
		{"a sidecar in a crash loop", pod(waiting("sidecar", "CrashLoopBackOff", "back-off 10s")), "container sidecar: CrashLoopBackOff"},
		{"crash-looping, running again for a moment between back-offs", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nats", RestartCount: 3,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
		}), "container nats: CrashLoopBackOff: restarted 3 times, the last run ended with exit code 1 (Error)"},
		{"restarted after a clean exit, starting: not trouble", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nats", RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}
		}), ""},
		{"a missing Secret key", pod(waiting("nats", "CreateContainerConfigError", "couldn't find key")), "CreateContainerConfigError"},
		{"not ready for a while: still starting", pod(notReadySince(now.Add(-time.Minute))), ""},
		{"not ready past the bound", pod(notReadySince(now.Add(-notReadyBound - time.Minute))), "not ready for 6m0s"},
		{"ready", pod(func(p *corev1.Pod) {
			p.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}), ""},
		{"no Ready condition, created long ago", pod(func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour)) }), "not ready for 1h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := podTrouble(tc.pod, now)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("podTrouble = %q, want %q", got, tc.want)
			}
		})
	}
}
