package loopback

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// TestOnTerminatingRunsBeforeThePreStopHook deletes a pod whose preStop
// hook puts its server into lame duck mode, with a hook registered through
// Cluster.OnTerminating that holds the termination for a second. Over that
// whole second the pod has its deletion timestamp, its server answers on
// its own address, has not entered lame duck mode and its preStop hook has
// not started: the hook sees the server as the deletion found it. After
// it returns the termination goes on as before (lame duck, the pod gone).
// A removed hook is not called for the next deletion. A kubelet that ran
// the hook after the preStop hook, or concurrently with it, fails here.
func TestOnTerminatingRunsBeforeThePreStopHook(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns, _ := probeNamespace(t, c, "terminating-hook")
	rightHook := []string{"nats-server", "--signal", "ldm=/var/run/nats/nats.pid"}

	var mu sync.Mutex
	calls := map[string]int{}
	var held []error // what the hook saw go wrong, per call
	remove := c.OnTerminating(func(pod *corev1.Pod) {
		if pod.Namespace != ns.Name {
			return // another test's pod
		}
		err := untouchedFor(c, pod, time.Second)
		mu.Lock()
		defer mu.Unlock()
		calls[pod.Name]++
		held = append(held, err)
	})
	defer remove()

	// runAndDelete runs a pod until Ready, deletes it and waits until it is gone.
	runAndDelete := func(name string) *corev1.Pod {
		pod := preStopPod(ns.Name, name, rightHook)
		must(t, c.Client.Create(ctx, pod))
		readyPod(t, c, ns.Name, pod.Name, 0)
		must(t, c.Client.Delete(ctx, pod))
		goneEventually(t, c, ns.Name, pod.Name)
		return pod
	}
	first := runAndDelete("first")
	mu.Lock()
	if calls[first.Name] != 1 || held[0] != nil {
		t.Errorf("hook called %d times for %s, saw %v; want once, the server untouched", calls[first.Name], first.Name, held)
	}
	mu.Unlock()
	if log := c.ServerLog(ns.Name, first.Name); !strings.Contains(log, "Entering lame duck mode") {
		t.Errorf("the preStop hook did not run after the hook: no lame duck in the server log:\n%s", log)
	}

	remove()
	second := runAndDelete("second")
	mu.Lock()
	defer mu.Unlock()
	if calls[second.Name] != 0 {
		t.Errorf("a removed hook was called %d times for %s", calls[second.Name], second.Name)
	}
}

// untouchedFor checks, every 100 ms for hold, that pod is being deleted and
// its server runs as it did: it answers on its address, has not entered
// lame duck mode, and no preStop hook was started for it.
func untouchedFor(c *Cluster, pod *corev1.Pod, hold time.Duration) error {
	if pod.DeletionTimestamp == nil {
		return fmt.Errorf("%s has no deletion timestamp", pod.Name)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ip := c.PodIP(pod.Namespace, pod.Name)
		if ip == "" {
			return fmt.Errorf("%s holds no address", pod.Name)
		}
		resp, err := client.Get("http://" + ip + ":8222/varz")
		if err != nil {
			return fmt.Errorf("%s's server does not answer: %w", pod.Name, err)
		}
		_ = resp.Body.Close()
		if strings.Contains(c.ServerLog(pod.Namespace, pod.Name), "Entering lame duck mode") {
			return fmt.Errorf("%s's server entered lame duck mode while the hook ran", pod.Name)
		}
		if strings.Contains(kubeletLines(c, pod.Namespace+"/"+pod.Name+": "), "preStop hook started") {
			return fmt.Errorf("%s's preStop hook started while the hook ran", pod.Name)
		}
	}
	return nil
}

func goneEventually(t *testing.T, c *Cluster, ns, name string) {
	t.Helper()
	eventually(t, func() error {
		err := c.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod %s still there (%v)", name, err)
	})
}
