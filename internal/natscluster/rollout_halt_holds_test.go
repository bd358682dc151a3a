package natscluster

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/internal/plan"
)

// TestHaltHoldsAtAnyTime: a halted rollout has no timer that ends it.
// The e2e halt tests (rollout_halt_test.go) watch a halt for seconds,
// while the only clock in the decision is podTrouble's notReadyBound, five
// minutes: a window that short would let through an operator whose halt
// ends when some timer fires. This proves there is none: the decision is
// the pure plan.Rollout over what podTrouble reads of the pods, and for
// every halting pod state, seconds to a month after the pod was made (on
// either side of notReadyBound), the trouble is still named and the step
// is still a halt that replaces nothing. The bound can only add trouble
// (a pod not ready for too long), never take it away. Careless variants it
// catches: a trouble that expires (troubleReasons honoured only within
// notReadyBound), or a halt that gives up after a while.
func TestHaltHoldsAtAnyTime(t *testing.T) {
	created := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	waiting := func(reason string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nats",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"}}}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse,
				LastTransitionTime: metav1.NewTime(created)}}
		}
	}
	for name, edit := range map[string]func(*corev1.Pod){
		"ErrImagePull":     waiting("ErrImagePull"),
		"ImagePullBackOff": waiting("ImagePullBackOff"),
		"CrashLoopBackOff": waiting("CrashLoopBackOff"),
		"Unschedulable": func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "m"}}
		},
		"started, never ready": func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse,
				LastTransitionTime: metav1.NewTime(created)}}
		},
	} {
		for _, after := range []time.Duration{time.Second, 10 * time.Second, notReadyBound - time.Second, notReadyBound + time.Second, time.Hour, 30 * 24 * time.Hour} {
			t.Run(fmt.Sprintf("%s/%s", name, after), func(t *testing.T) {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nats-2", CreationTimestamp: metav1.NewTime(created)}}
				edit(pod)
				trouble := podTrouble(pod, created.Add(after))
				if name == "started, never ready" && after < notReadyBound {
					// Still starting: the rollout waits for it, as it
					// waits for any server to be ready, without a halt.
					if trouble != "" {
						t.Fatalf("podTrouble = %q before the bound", trouble)
					}
					return
				}
				if trouble == "" {
					t.Fatalf("podTrouble is empty %s after creation: the halt would end by the clock", after)
				}
				step := plan.Rollout(plan.RolloutObservation{Want: 3, Routes: "true", MetaLeader: "nats-0", Servers: []plan.Server{
					{Name: "nats-0", Outdated: true, Ready: true, Routes: "true"},
					{Name: "nats-1", Outdated: true, Ready: true, Routes: "true"},
					{Name: "nats-2", Ready: false, Routes: "true", Trouble: trouble},
				}})
				if !step.Halted || step.Action != plan.Wait {
					t.Fatalf("Rollout = %+v %s after creation, want a halt that replaces nothing", step, after)
				}
			})
		}
	}
}
