package realnode_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// A server whose memory limit is too low for what it is asked to hold:
// one server at the smallest limit admitted (64Mi) with a memory store
// allowed far past it, and a client filling a memory stream as fast as it
// can, again after every restart. The real kubelet's cgroup kills it
// (OOMKilled in the pod's status, read here), again after each restart,
// and the NatsCluster's Ready condition says so: reason OOMKilled, the
// server, and its limit. Careless variant seen failing: the status
// without the OOM reading (run as a temporary change of observe: Ready
// never said OOMKilled in 3 minutes, only how many servers were ready).
func TestOOMKillShowsInStatus(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	limit := resource.MustParse("64Mi")
	c := formCluster(t, ns, "small", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Resources = &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: limit},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: limit},
		}
		s.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: resource.MustParse("2Gi")}
	})
	nc := clientConn(t, c)
	js := e2ekit.AppJetStream(t, nc)
	heap := natsjs.StreamConfig{Name: "HEAP", Subjects: []string{"heap.>"}, Storage: natsjs.MemoryStorage, Replicas: 1}
	createStream(t, js, heap)
	stop := fillMemory(t, js, heap)
	defer stop()

	var ready *metav1.Condition
	poll.Until(t, 3*time.Minute, func() error {
		if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready = meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Reason != v1alpha1.ReasonOOMKilled {
			return fmt.Errorf("Ready %+v, want %s", ready, v1alpha1.ReasonOOMKilled)
		}
		return nil
	})
	if !strings.Contains(ready.Message, "small-0") || !strings.Contains(ready.Message, "64Mi") {
		t.Errorf("Ready says %q: it does not name the server and its limit", ready.Message)
	}
	// The kubelet's own word, and the kill again after a restart (the
	// filler made the stream again and filled it): the status above is
	// not of a one-off.
	poll.Until(t, 2*time.Minute, func() error {
		pod := &corev1.Pod{}
		if err := node.Client.Get(ctxOf(t), client.ObjectKey{Namespace: ns, Name: "small-0"}, pod); err != nil {
			return err
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name != render.ServerContainerName {
				continue
			}
			last := cs.LastTerminationState.Terminated
			if cur := cs.State.Terminated; cur != nil {
				last = cur
			}
			if last == nil || last.Reason != "OOMKilled" || cs.RestartCount < 2 {
				return fmt.Errorf("the kubelet: last end %+v, %d restarts; want OOMKilled after 2 or more", last, cs.RestartCount)
			}
			t.Logf("status: %s; the kubelet: OOMKilled, %d restarts", ready.Message, cs.RestartCount)
			return nil
		}
		return fmt.Errorf("no container %s", render.ServerContainerName)
	})
}

// fillMemory publishes 64 KiB messages to the memory stream cfg until
// stopped, going on after each reconnect. A standalone server keeps no
// memory stream over a restart: the stream is made again whenever a
// publish finds none, so that whatever the server restarts with, it fills
// again.
func fillMemory(t *testing.T, js natsjs.JetStream, cfg natsjs.StreamConfig) (stop func()) {
	ctx, cancel := context.WithCancel(ctxOf(t))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		payload := make([]byte, 64<<10)
		for ctx.Err() == nil {
			_, err := js.Publish(ctx, "heap.fill", payload)
			switch {
			case errors.Is(err, nats.ErrNoResponders), errors.Is(err, natsjs.ErrNoStreamResponse):
				_, _ = js.CreateStream(ctx, cfg)
			case err != nil:
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}
