package loopback

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// Hooks a test registers to look at a pod at the instant the kubelet
// begins its graceful termination: the deletion timestamp is seen, and
// nothing has been done to the pod yet (no preStop hook, no signal). What
// a server holds then is what it held when it was deleted, read from the
// server itself; a moment later its preStop hook puts it into lame duck
// mode, which hands its leaderships away.

// terminatingHooks are the registered hooks, each under its own key so
// that one can be removed while others stay (tests share one cluster).
type terminatingHooks struct {
	mu    sync.Mutex
	next  int
	hooks map[int]func(*corev1.Pod)
}

func (h *terminatingHooks) add(fn func(*corev1.Pod)) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hooks == nil {
		h.hooks = map[int]func(*corev1.Pod){}
	}
	key := h.next
	h.next++
	h.hooks[key] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.hooks, key)
	}
}

// run calls every hook with its own copy of pod, one after another, and
// returns when all have: the termination waits for them. The lock is not
// held meanwhile, so a hook may remove itself or others.
func (h *terminatingHooks) run(pod *corev1.Pod) {
	h.mu.Lock()
	fns := make([]func(*corev1.Pod), 0, len(h.hooks))
	for _, fn := range h.hooks {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn(pod.DeepCopy())
	}
}

// OnTerminating registers fn, called for every pod of the cluster when the
// kubelet begins its graceful deletion (the pod has a deletion timestamp),
// before the preStop hook runs and before any signal is sent: its
// containers run untouched until fn returns. fn runs on the pod's worker,
// so it delays that pod's termination (as a slow kubelet would) and must
// bound what it does; the grace period starts after it. A pod deleted
// with grace period 0 (force deletion) is killed without it. remove
// unregisters fn.
func (c *Cluster) OnTerminating(fn func(pod *corev1.Pod)) (remove func()) {
	return c.kubelet.terminating.add(fn)
}
