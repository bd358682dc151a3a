package loopback

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A pod's two writes to the API besides its status: the binding that
// starts its life here, the deletion that ends it.

// bind assigns a pending pod to the node, as the scheduler would.
func (k *kubelet) bind(pod *corev1.Pod) {
	k.mu.Lock()
	if k.binding[pod.UID] || k.ctx.Err() != nil {
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
			k.mu.Unlock()
		}()
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: k.node},
		}
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
