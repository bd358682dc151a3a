package envtest_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// stallable is a monitor port that answers every request, or, while
// stalled, accepts the connection and never answers: a SIGSTOPped server
// (the kernel still accepts its connections) or one cut off behind a
// proxy.
type stallable struct{ stalled atomic.Bool }

func stallableMonitor(t *testing.T, ip string) *stallable {
	t.Helper()
	s := &stallable{}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(render.MonitorPort)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for s.stalled.Load() {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		_, _ = w.Write([]byte("{}"))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// hungServerCluster is a settled one-server cluster whose server hangs:
// its pod is ready, its monitor port accepts and never answers.
func hungServerCluster(t *testing.T) (*v1alpha1.NatsCluster, *stallable) {
	t.Helper()
	c := oneServerCluster(t)
	serversReady(t, c)
	ip := loopbackNet() + "1"
	mon := stallableMonitor(t, ip)
	mon.stalled.Store(true)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}}
	get(t, sts)
	serverPod(t, c, "nats-0", "r1", ip, sts)
	return c, mon
}

// A server whose pod is ready but that does not answer: the status names
// it, the rollout replaces nothing while it hangs (held over a window),
// and once it answers again both recover with nobody's help (no event
// about the pod: the operator looks again by itself).
func TestHungServerIsNamedAndHoldsTheRollout(t *testing.T) {
	t.Parallel()
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		c, mon := hungServerCluster(t)
		eventually(t, wait, func() error {
			status, reason, msg := readyMessage(t, c)
			if status != metav1.ConditionFalse || reason != v1alpha1.ReasonServerHung || !strings.Contains(msg, "server nats-0 does not answer") {
				return fmt.Errorf("Ready %s/%s %q, want False/%s naming nats-0", status, reason, msg, v1alpha1.ReasonServerHung)
			}
			return nil
		})
		mon.stalled.Store(false)
		readyCondition(t, c, metav1.ConditionTrue, v1alpha1.ReasonReady)
	})
	t.Run("rollout", func(t *testing.T) {
		t.Parallel()
		c := oneServerCluster(t)
		sts := rolling(t, c)
		ip := loopbackNet() + "1"
		mon := stallableMonitor(t, ip)
		mon.stalled.Store(true)
		// Outdated and ready: without the hang, the rollout would replace
		// it at once.
		pod := serverPod(t, c, "nats-0", "r1", ip, sts)
		eventually(t, wait, func() error {
			if _, _, msg := readyMessage(t, c); !strings.Contains(msg, "waiting for server nats-0, which does not answer") {
				return fmt.Errorf("Ready %q, want the rollout waiting for nats-0", msg)
			}
			return nil
		})
		poll.Holds(t, 5*time.Second, func() error {
			var p corev1.Pod
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(pod), &p); err != nil {
				return fmt.Errorf("the hung server's pod: %v", err)
			}
			if p.UID != pod.UID || !p.DeletionTimestamp.IsZero() {
				return fmt.Errorf("the hung server's pod was deleted")
			}
			return nil
		})
		mon.stalled.Store(false)
		eventually(t, wait, func() error {
			var p corev1.Pod
			err := k8s.Get(ctx(t), client.ObjectKeyFromObject(pod), &p)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if err == nil && p.UID == pod.UID && p.DeletionTimestamp.IsZero() {
				return fmt.Errorf("nats-0 not replaced yet once it answers")
			}
			return nil
		})
	})
}

// A scale-down removes no server while one hangs, says so, and goes on
// by itself once the server answers again.
func TestScaleDownWaitsWhileAServerHangs(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](4) })
	create(t, c)
	serversReady(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}}
	get(t, sts)
	subnet := loopbackNet()
	var hung *stallable
	for i := range 4 {
		ip := fmt.Sprintf("%s%d", subnet, i+1)
		mon := stallableMonitor(t, ip)
		if i == 0 {
			hung = mon
			mon.stalled.Store(true)
		}
		serverPod(t, c, fmt.Sprintf("nats-%d", i), "r1", ip, sts)
	}
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.Replicas = ptr.To[int32](3) })
	const waiting = "scale-down: server nats-0 does not answer"
	eventually(t, wait, func() error {
		if _, _, msg := readyMessage(t, c); !strings.Contains(msg, waiting) || !strings.Contains(msg, "no server is removed while one hangs") {
			return fmt.Errorf("Ready %q, want the scale-down waiting for nats-0", msg)
		}
		return nil
	})
	poll.Holds(t, 5*time.Second, func() error {
		var live appsv1.StatefulSet
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), &live); err != nil {
			return err
		}
		if n := ptr.Deref(live.Spec.Replicas, 0); n != 4 {
			return fmt.Errorf("the StatefulSet went to %d replicas while nats-0 hangs", n)
		}
		return nil
	})
	hung.stalled.Store(false)
	// The servers here answer no system request: the scale-down now waits
	// for JetStream, which it could not ask before.
	eventually(t, wait, func() error {
		if _, _, msg := readyMessage(t, c); strings.Contains(msg, "does not answer") || !strings.Contains(msg, "scale-down") {
			return fmt.Errorf("Ready %q, want the scale-down past the hang", msg)
		}
		return nil
	})
}
