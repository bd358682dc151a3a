package e2ekit

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testns"
)

// Deadlines: generous for a busy 2-core machine, reached only when
// something is broken. Timing goals belong to benchmarks, not here.
const (
	FormTimeout = 3 * time.Minute
	Wait        = 30 * time.Second
)

// Eventually polls check until it returns nil, failing the test with the
// last error once timeout has passed.
func Eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	poll.Until(t, timeout, check)
}

// Ctx is a context for one test's calls, cancelled when it ends.
func Ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// Namespace makes a fresh namespace for one test, deleted when the test
// ends (without waiting: its servers stop in the background, as they would
// in a real cluster) unless the test failed, to leave it for a look.
func Namespace(t *testing.T) string {
	t.Helper()
	name := testns.Name(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := Cluster.Client.Create(Ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = Cluster.Client.Delete(context.Background(), ns)
		}
	})
	return name
}

// NatsCluster is a NatsCluster in ns with the given spec edits.
func NatsCluster(ns, name string, edits ...func(*v1alpha1.NatsClusterSpec)) *v1alpha1.NatsCluster {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, e := range edits {
		e(&c.Spec)
	}
	return c
}

// Get reads obj, waiting for it to exist.
func Get(t *testing.T, obj client.Object) {
	t.Helper()
	Eventually(t, Wait, func() error {
		return Cluster.Client.Get(Ctx(t), client.ObjectKeyFromObject(obj), obj)
	})
}

// PodNames are the pods of a StatefulSet of n replicas.
func PodNames(name string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", name, i)
	}
	return out
}

// NatsStatus is the status of the pod's nats container, nil before the
// kubelet first reports it.
func NatsStatus(p *corev1.Pod) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == "nats" {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// PodReady reports whether p's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
