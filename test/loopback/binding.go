package loopback

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// A pod's two writes to the API besides its status: the binding that
// starts its life here, the deletion that ends it.

// bind assigns a pending pod to the node, as the scheduler would, if it
// fits the node; if not, it stays pending with the scheduler's condition,
// until the node changes (scheduleAgain).
func (k *kubelet) bind(pod *corev1.Pod) {
	k.mu.Lock()
	if k.ctx.Err() != nil {
		k.mu.Unlock()
		return
	}
	if k.binding[pod.UID] {
		// What the binding in flight decided may be stale by now (the
		// node's taints changed while it ran): it looks again after.
		k.bindAgain[pod.UID] = true
		k.mu.Unlock()
		return
	}
	k.binding[pod.UID] = true
	k.wg.Add(1)
	k.mu.Unlock()
	go func() {
		defer k.wg.Done()
		defer func() {
			k.mu.Lock()
			delete(k.binding, pod.UID)
			again := k.bindAgain[pod.UID]
			delete(k.bindAgain, pod.UID)
			k.mu.Unlock()
			if latest, err := k.pods.Pods(pod.Namespace).Get(pod.Name); again && err == nil &&
				latest.UID == pod.UID && latest.Spec.NodeName == "" && latest.DeletionTimestamp == nil {
				k.bind(latest)
			}
		}()
		k.placing.Lock()
		defer k.placing.Unlock()
		target, why := k.place(pod)
		if why != "" {
			k.reportUnschedulable(pod, why)
			return
		}
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: target},
		}
		defer func() { k.placed[pod.UID] = target }()
		for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
			err := k.cs.CoreV1().Pods(pod.Namespace).Bind(k.ctx, b, metav1.CreateOptions{})
			if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) || k.ctx.Err() != nil {
				return // bound, gone, or bound already
			}
			k.logf("binding %s/%s: %v", pod.Namespace, pod.Name, err)
			select {
			case <-k.ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
	}()
}

// deletePod removes a pod whose containers have all stopped, with grace
// period 0 and only if it is still the same pod; false when it should be
// tried again.
func (k *kubelet) deletePod(ctx context.Context, pod *corev1.Pod) bool {
	err := k.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.logf("%s/%s: deleting: %v", pod.Namespace, pod.Name, err)
		return false
	}
	k.logf("%s/%s: deleted", pod.Namespace, pod.Name)
	return true
}

// node reads a node of the kubelet's; one not in the cache yet (nodes are
// registered before the informers start) is read from the API.
func (k *kubelet) readNode(name string) (*corev1.Node, error) {
	node, err := k.nodeLister.Get(name)
	if err != nil {
		node, err = k.cs.CoreV1().Nodes().Get(k.ctx, name, metav1.GetOptions{})
	}
	return node, err
}

// reportUnschedulable writes the scheduler's PodScheduled=False condition,
// once per message: a strategic merge patch merges conditions by type.
func (k *kubelet) reportUnschedulable(pod *corev1.Pod, why string) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message == why {
			return
		}
	}
	k.logf("%s/%s: unschedulable: %s", pod.Namespace, pod.Name, why)
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status": map[string]any{"conditions": []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: unschedulableReason,
			Message: why, LastTransitionTime: metav1.Now(),
		}}},
	})
	if err != nil {
		return
	}
	_, err = k.cs.CoreV1().Pods(pod.Namespace).Patch(k.ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && k.ctx.Err() == nil {
		k.logf("%s/%s: writing PodScheduled: %v", pod.Namespace, pod.Name, err)
	}
}

// scheduleAgain offers every pending pod to the node again, as the
// scheduler retries unschedulable pods when a node changes.
func (k *kubelet) scheduleAgain() {
	pods, err := k.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, pod := range pods {
		if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil {
			k.bind(pod)
		}
	}
}
