package loopback

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// event records a core/v1 Event about pod from the kubelet, as a real one
// reports what it did to a pod (FailedPreStopHook). Written on a goroutine
// of its own: the pod's loop does not wait for the API server.
func (k *kubelet) event(pod *corev1.Pod, eventType, reason, message string) {
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano())},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: "spec.containers{" + natsContainerName + "}"},
		Reason: reason, Message: message, Type: eventType,
		Source:         corev1.EventSource{Component: "kubelet", Host: k.node},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "kubelet", ReportingInstance: k.node,
	}
	k.mu.Lock()
	if k.ctx.Err() != nil {
		k.mu.Unlock()
		return
	}
	k.wg.Add(1)
	k.mu.Unlock()
	go func() {
		defer k.wg.Done()
		if _, err := k.cs.CoreV1().Events(pod.Namespace).Create(k.ctx, ev, metav1.CreateOptions{}); err != nil && k.ctx.Err() == nil {
			k.logf("%s/%s: recording event %s: %v", pod.Namespace, pod.Name, reason, err)
		}
	}()
}
