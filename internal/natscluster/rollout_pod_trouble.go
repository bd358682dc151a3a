package natscluster

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/servers"
)

// notReadyBound is how long a started server may stay not ready before the
// rollout calls it broken: far longer than a server takes to start and
// catch up, short enough that a broken change is named within minutes.
const notReadyBound = 5 * time.Minute

// troubleReasons are the container waiting reasons that do not clear by
// themselves: the change that made the pod must be fixed.
var troubleReasons = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"CrashLoopBackOff":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
}

// podTrouble says why pod cannot become ready, as its status tells: the
// scheduler found no node, a container waits for a reason that does not
// clear by itself or is running again after a failed run without being
// ready, or it has been not ready for longer than notReadyBound.
// "" when nothing is known to be wrong (it may just be starting).
func podTrouble(pod *corev1.Pod, now time.Time) string {
	if servers.PodReady(pod) {
		return ""
	}
	notReadySince := pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse:
			return fmt.Sprintf("%s: %s", c.Reason, c.Message)
		case c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue && !c.LastTransitionTime.IsZero():
			notReadySince = c.LastTransitionTime.Time
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if oom := oomKill(pod, cs); oom != "" {
				return oom
			}
			if w := cs.State.Waiting; w != nil && troubleReasons[w.Reason] {
				return fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message)
			}
			// Between two back-offs a crash-looping container runs for a
			// moment, and its state says Running: its last run failing
			// tells the same story, so that the halt does not flicker
			// into a wait at every restart.
			if last := cs.LastTerminationState.Terminated; last != nil && last.ExitCode != 0 && cs.State.Running != nil && !cs.Ready {
				return fmt.Sprintf("container %s: CrashLoopBackOff: restarted %d times, the last run ended with exit code %d (%s)",
					cs.Name, cs.RestartCount, last.ExitCode, last.Reason)
			}
		}
	}
	if !notReadySince.IsZero() && now.Sub(notReadySince) > notReadyBound {
		return fmt.Sprintf("not ready for %s", now.Sub(notReadySince).Round(time.Second))
	}
	return ""
}
