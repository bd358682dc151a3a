package envtest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testns"
)

// eventually polls check until it returns nil, failing the test with the
// last error once timeout has passed.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	poll.Until(t, timeout, check)
}

// wait is the deadline of every eventually in this suite: generous, since
// the machine may be busy, and only reached when something is broken.
const wait = 30 * time.Second

// namespace makes a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	name := testns.Name(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// natsCluster is a NatsCluster in ns with the given spec edits.
func natsCluster(ns, name string, edits ...func(*v1alpha1.NatsClusterSpec)) *v1alpha1.NatsCluster {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, e := range edits {
		e(&c.Spec)
	}
	return c
}

// ctx is a context for the calls of one test, cancelled with it.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// create makes obj in the API server or fails the test.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(ctx(t), obj); err != nil {
		t.Fatal(err)
	}
}

// update re-reads obj, applies edit and writes it back, retrying on
// conflicts with the operator's own writes.
func update[T client.Object](t *testing.T, obj T, edit func(T)) {
	t.Helper()
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		edit(obj)
		return k8s.Update(ctx(t), obj)
	})
}

// waitObserved waits for a pass of the operator that saw c's current
// generation to have finished (status.observedGeneration); holding, when
// given, must hold at every look meanwhile, or the test stops.
func waitObserved(t *testing.T, c *v1alpha1.NatsCluster, holding ...func() error) {
	t.Helper()
	eventually(t, wait, func() error {
		for _, h := range holding {
			if err := h(); err != nil {
				t.Fatal(err)
			}
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if c.Status.ObservedGeneration < c.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", c.Status.ObservedGeneration, c.Generation)
		}
		return nil
	})
}

// readyCondition waits for c's Ready condition to have the given status and
// reason, and returns c as read then.
func readyCondition(t *testing.T, c *v1alpha1.NatsCluster, status metav1.ConditionStatus, reason string) *v1alpha1.NatsCluster {
	t.Helper()
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		got := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if got == nil || got.Status != status || got.Reason != reason {
			return fmt.Errorf("Ready condition %+v, want %s/%s", got, status, reason)
		}
		return nil
	})
	return c
}

// readyMessage is the status, reason and message of c's Ready condition
// now (the error, or that there is none, as the message).
func readyMessage(t *testing.T, c *v1alpha1.NatsCluster) (metav1.ConditionStatus, string, string) {
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
		return "", "", err.Error()
	}
	ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil {
		return "", "", "no Ready condition"
	}
	return ready.Status, ready.Reason, ready.Message
}

// oneServerCluster creates a NatsCluster of one server without JetStream
// in a fresh namespace: the smallest cluster, for tests that play its
// StatefulSet and pod by hand.
func oneServerCluster(t *testing.T) *v1alpha1.NatsCluster {
	t.Helper()
	c := natsCluster(namespace(t), "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.JetStream.Enabled = ptr.To(false)
	})
	create(t, c)
	return c
}

// get reads obj, waiting for it to exist.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, wait, func() error { return k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj) })
}
