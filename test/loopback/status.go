package loopback

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// statusWriter remembers what was last written, so that an unchanged
// status costs no request, and when each condition last changed.
type statusWriter struct {
	last        []byte
	transitions map[corev1.PodConditionType]transition
}

type transition struct {
	status corev1.ConditionStatus
	at     metav1.Time
}

// writeStatus patches the pod's status when it changed. A JSON merge patch
// replaces the lists (conditions, container statuses) whole, and the UID
// in it makes the patch fail rather than touch a newer pod of the same name.
func (w *podWorker) writeStatus(ctx context.Context) {
	st := w.podStatus()
	data, err := json.Marshal(st)
	if err != nil || bytes.Equal(data, w.status.last) {
		return
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": w.uid},
		"status":   json.RawMessage(data),
	})
	if err != nil {
		return
	}
	_, err = w.k.cs.CoreV1().Pods(w.key.Namespace).Patch(ctx, w.key.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	switch {
	case err == nil:
		w.status.last = data
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// The pod is gone or replaced; its worker ends soon.
	default:
		w.k.logf("%s: writing status: %v", w.key, err)
	}
}

// podStatus is the status the kubelet reports for what runs now.
func (w *podWorker) podStatus() corev1.PodStatus {
	st := corev1.PodStatus{
		Phase:    corev1.PodPending,
		HostIP:   nodeIP,
		HostIPs:  []corev1.HostIP{{IP: nodeIP}},
		QOSClass: w.pod.Status.QOSClass,
	}
	if w.holdsIP {
		st.PodIP, st.PodIPs = w.ip, []corev1.PodIP{{IP: w.ip}}
	}
	if !w.startTime.IsZero() {
		st.StartTime = ptr.To(metav1.NewTime(w.startTime))
	}
	initStatuses, initialized, sidecarsReady := w.initContainerStatuses()
	st.InitContainerStatuses = initStatuses
	// Native sidecars' readiness counts toward the pod's, as Kubernetes
	// counts restartable init containers'.
	allReady := sidecarsReady
	// A container waiting that never ran keeps the pod Pending, as the
	// kubelet's phase does (one waiting again after a run counts as run).
	anyRunning, anyNeverRan, allExited, allSucceeded := false, false, true, true
	for i := range w.pod.Spec.Containers {
		c := &w.pod.Spec.Containers[i]
		cs := w.containerStatus(c)
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
		allReady = allReady && cs.Ready
		anyRunning = anyRunning || cs.State.Running != nil
		anyNeverRan = anyNeverRan || (cs.State.Waiting != nil && cs.LastTerminationState.Terminated == nil)
		allExited = allExited && cs.State.Terminated != nil
		allSucceeded = allSucceeded && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
	}
	switch {
	case w.terminating && allExited && allSucceeded:
		st.Phase = corev1.PodSucceeded
	case w.terminating && allExited:
		st.Phase = corev1.PodFailed
	case anyNeverRan:
		st.Phase = corev1.PodPending
	case anyRunning, len(w.pod.Spec.Containers) > 0:
		// Every container ran; those not running wait for their restart
		// (restartPolicy Always): the kubelet says Running, also for a pod
		// in a crash loop between two runs.
		st.Phase = corev1.PodRunning
	}
	st.Conditions = []corev1.PodCondition{
		w.condition(corev1.PodReadyToStartContainers, w.sandboxReady && !(w.terminating && allExited)),
		w.condition(corev1.PodInitialized, initialized),
		w.condition(corev1.ContainersReady, allReady),
		w.condition(corev1.PodReady, allReady),
		w.condition(corev1.PodScheduled, true),
	}
	return st
}

// condition keeps a condition's transition time while its status holds.
func (w *podWorker) condition(t corev1.PodConditionType, ok bool) corev1.PodCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	if w.status.transitions == nil {
		w.status.transitions = map[corev1.PodConditionType]transition{}
	}
	tr, seen := w.status.transitions[t]
	if !seen || tr.status != status {
		tr = transition{status: status, at: metav1.NewTime(time.Now())}
		w.status.transitions[t] = tr
	}
	c := corev1.PodCondition{Type: t, Status: status, LastTransitionTime: tr.at}
	if !ok && (t == corev1.PodReady || t == corev1.ContainersReady) {
		c.Reason = "ContainersNotReady"
	}
	return c
}

// containerStatus reports the nats container as it runs, and every other
// container as running (and ready) from the moment the pod's volumes exist
// until the server has stopped.
func (w *podWorker) containerStatus(c *corev1.Container) corev1.ContainerStatus {
	if c.Name == istioProxyContainer && w.proxy.has {
		return w.proxyStatus(c)
	}
	if w.runsKubenats(c) {
		return w.kubenatsStatus(c)
	}
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "loopback://" + c.Image}
	if c.Name != natsContainerName {
		switch {
		case w.terminating && w.nats.run == nil:
			// Stopped with the server: the kubelet kills every container.
			cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed",
				StartedAt: metav1.NewTime(w.startTime), FinishedAt: metav1.NewTime(w.stoppedAt)}
		case w.sandboxReady:
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(w.startTime)}
			cs.Ready, cs.Started = true, ptr.To(true)
		default:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		if cs.Started == nil {
			cs.Started = ptr.To(false)
		}
		return cs
	}
	n := &w.nats
	cs.RestartCount = n.restarts
	if n.imageID != "" {
		cs.ImageID = n.imageID
	}
	cs.Ready = n.run != nil && n.started && n.ready
	cs.Started = ptr.To(n.run != nil && n.started)
	switch {
	case n.run != nil:
		cs.ContainerID = containerID(w, n.run)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(n.run.proc.startedAt)}
		if n.last != nil {
			cs.LastTerminationState.Terminated = n.last
		}
	case w.terminating && n.last != nil:
		cs.ContainerID = n.last.ContainerID
		cs.State.Terminated = n.last
	case n.waiting != nil:
		cs.State.Waiting = n.waiting
		if n.last != nil {
			cs.LastTerminationState.Terminated = n.last
		}
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return cs
}
