package natscluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/servers"
)

// oomKilledServers says, for each server that is not ready and whose
// container the kernel last killed for going over its memory limit, what
// happened and what to change. A crash loop of OOM kills reads as what it
// is, not as "2 of 3 servers ready".
func oomKilledServers(pods []corev1.Pod) []string {
	var out []string
	for i := range pods {
		pod := &pods[i]
		if servers.PodReady(pod) {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if msg := oomKill(pod, cs); msg != "" {
				out = append(out, pod.Name+": "+msg)
				break
			}
		}
	}
	return out
}

// oomKill describes a container that is not ready and whose last run the
// kernel ended for its memory limit (the kubelet's OOMKilled), or "".
func oomKill(pod *corev1.Pod, cs corev1.ContainerStatus) string {
	last := cs.LastTerminationState.Terminated
	if cur := cs.State.Terminated; cur != nil {
		last = cur
	}
	if cs.Ready || last == nil || last.Reason != "OOMKilled" {
		return ""
	}
	limit := "its memory limit"
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && c.Name == cs.Name {
			limit = "its memory limit of " + q.String()
		}
	}
	restarts := ""
	if cs.RestartCount > 0 {
		restarts = fmt.Sprintf(", restarted %d times", cs.RestartCount)
	}
	return fmt.Sprintf("container %s was killed for going over %s (OOMKilled%s): raise spec.resources.limits.memory, or lower what the server keeps in memory",
		cs.Name, limit, restarts)
}
