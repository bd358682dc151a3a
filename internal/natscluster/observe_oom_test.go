package natscluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOOMKilledServers: a server is named when it is not ready and its
// container's last run (or the run that just ended) was ended by the
// kernel for the memory limit; a server killed once that is ready again,
// or one that crashed for another reason, is not. Careless reading it
// catches: one that looks at the current state only (a crash-looping
// container is Waiting, its OOM kill is in lastState) and one that names
// ready servers (a server that recovered would keep the cluster not
// Ready).
func TestOOMKilledServers(t *testing.T) {
	pod := func(name string, ready bool, cs corev1.ContainerStatus) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		cs.Name, cs.Ready = "nats", ready
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nats", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("12Mi")}}}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}, ContainerStatuses: []corev1.ContainerStatus{cs}},
		}
	}
	killed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}
	crashed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}
	backOff := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	pods := []corev1.Pod{
		pod("nats-0", false, corev1.ContainerStatus{State: backOff, LastTerminationState: killed, RestartCount: 3}),
		pod("nats-1", false, corev1.ContainerStatus{State: killed}),
		pod("nats-2", true, corev1.ContainerStatus{LastTerminationState: killed, RestartCount: 1}),
		pod("nats-3", false, corev1.ContainerStatus{State: backOff, LastTerminationState: crashed, RestartCount: 3}),
	}
	got := oomKilledServers(pods)
	if len(got) != 2 || !strings.HasPrefix(got[0], "nats-0: container nats was killed for going over its memory limit of 12Mi (OOMKilled, restarted 3 times)") ||
		!strings.HasPrefix(got[1], "nats-1: ") {
		t.Fatalf("oomKilledServers = %q", got)
	}
}
