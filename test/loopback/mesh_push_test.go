package loopback

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/test/poll"
)

// TestIstioPushDelay: what istiod pushes reaches each proxy a moment
// later, each in its own time. A policy made STRICT is not yet in force
// on either server for the first half of the delay, then is on both; a
// pod created again with a new address is, in its peer's hosts file, at
// that address (a destination the peer's sidecar does not know, reached
// in plaintext) until the push arrives, and only then behind the peer's
// sidecar. Seen failing against the careless model that delivers every
// push at once (the delay ignored): a server refused plaintext 55 ms
// after the change.
func TestIstioPushDelay(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns := meshNamespace(t, c, "mesh-push")
	const delay = 4 * time.Second
	c.Mesh.SetPushDelay(ns, delay)
	t.Cleanup(func() { c.Mesh.SetPushDelay(ns, 0) })
	must(t, c.Client.Create(ctx, meshStatefulSet(ns, 2, true)))
	readyPod(t, c, ns, "nats-0", 0)
	readyPod(t, c, ns, "nats-1", 0)
	servers := []string{"nats-0", "nats-1"}

	answers := func(pod string) bool {
		line, _ := firstLine(c.PodIP(ns, pod)+":4222", "PING\r\n", silenceWindow)
		return strings.HasPrefix(line, "INFO ")
	}
	setPeerAuthentication(t, c, ns, "STRICT", nil)
	changed := time.Now()
	poll.Holds(t, delay/2-500*time.Millisecond, func() error {
		for _, p := range servers {
			if !answers(p) {
				return fmt.Errorf("%s refuses plaintext %s after the change: the push arrived before half its delay", p, time.Since(changed).Round(time.Millisecond))
			}
		}
		return nil
	})
	eventually(t, func() error {
		for _, p := range servers {
			if answers(p) {
				return fmt.Errorf("%s still answers plaintext", p)
			}
		}
		return nil
	})
	t.Logf("STRICT in force on both servers %s after the change", time.Since(changed).Round(time.Millisecond))

	peer := getPod(t, c, ns, "nats-0")
	hosts := c.kubelet.dns.podFilePath(peer.UID)
	old := c.PodIP(ns, "nats-1")
	must(t, c.Client.Delete(ctx, getPod(t, c, ns, "nats-1")))
	var fresh string
	eventually(t, func() error {
		pod := &corev1.Pod{}
		if err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "nats-1"}, pod); err != nil {
			return err
		}
		if pod.Status.PodIP == "" || pod.Status.PodIP == old {
			return fmt.Errorf("nats-1 has no new address yet")
		}
		fresh = pod.Status.PodIP
		return nil
	})
	seenAt := func(what string, match func(ip string) bool) time.Time {
		t.Helper()
		var at time.Time
		eventually(t, func() error {
			data, err := os.ReadFile(hosts)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(data), "\n") {
				if f := strings.Fields(line); len(f) > 1 && f[1] == "nats-1.nats" && match(f[0]) {
					at = time.Now()
					return nil
				}
			}
			return fmt.Errorf("nats-0's hosts file has no nats-1 %s:\n%s", what, data)
		})
		return at
	}
	plain := seenAt("at its new address", func(ip string) bool { return ip == fresh })
	behind := seenAt("behind nats-0's sidecar", func(ip string) bool { return ip != fresh && ip != old })
	if behind.Sub(plain) < delay/2-500*time.Millisecond {
		t.Errorf("nats-0 knew the new nats-1 %s after its address appeared, want about the push delay (%s to %s)", behind.Sub(plain), delay/2, delay)
	}
	t.Logf("nats-0 reached the new nats-1 at its own address for %s, then through its sidecar", behind.Sub(plain).Round(time.Millisecond))
}
