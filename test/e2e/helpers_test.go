package e2e_test

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

// eventually polls check until it returns nil, failing the test with the
// last error once timeout has passed.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	poll.Until(t, timeout, check)
}

// Deadlines: generous for a busy 2-core machine, reached only when
// something is broken. Timing goals belong to benchmarks, not here.
const (
	formTimeout = 3 * time.Minute
	wait        = 30 * time.Second
)

// testCtx is a context for one test's calls, cancelled when it ends.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// namespace makes a fresh namespace for one test, deleted when the test
// ends (without waiting: its servers stop in the background, as they would
// in a real cluster) unless the test failed, to leave it for a look.
func namespace(t *testing.T) string {
	t.Helper()
	name := testns.Name(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cluster.Client.Create(testCtx(t), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = cluster.Client.Delete(context.Background(), ns)
		}
	})
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

// get reads obj, waiting for it to exist.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, wait, func() error {
		return cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(obj), obj)
	})
}

// podNames are the pods of a StatefulSet of n replicas.
func podNames(name string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", name, i)
	}
	return out
}
