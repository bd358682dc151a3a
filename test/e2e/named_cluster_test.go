package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// formNamed creates a NatsCluster named name in the existing namespace ns
// and waits for it to be Ready. Scenario 1's formCluster always names its
// cluster "nats" in a namespace of its own; the later scenarios pick their
// own names, so that a child named after a fixed string would show.
func formNamed(t *testing.T, ns, name string, edits ...func(*v1alpha1.NatsClusterSpec)) *formed {
	t.Helper()
	c := natsCluster(ns, name, edits...)
	began := time.Now()
	if err := cluster.Client.Create(testCtx(t), c); err != nil {
		t.Fatal(err)
	}
	waitClusterReady(t, c, formTimeout)
	t.Logf("NatsCluster %s/%s Ready %.1fs after creation", ns, name, time.Since(began).Seconds())
	return &formed{NS: ns, Cluster: c, Pods: podNames(name, int(c.Spec.ReplicaCount()))}
}

// waitClusterReady waits for c to report Ready for its current generation,
// every server ready, and leaves the latest c behind.
func waitClusterReady(t *testing.T, c *v1alpha1.NatsCluster, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		switch {
		case c.Status.ObservedGeneration != c.Generation:
			return fmt.Errorf("status describes generation %d, the spec is at %d", c.Status.ObservedGeneration, c.Generation)
		case c.Status.Phase != v1alpha1.PhaseReady || ready == nil || ready.Status != metav1.ConditionTrue:
			return fmt.Errorf("phase %q, Ready condition %+v", c.Status.Phase, ready)
		case c.Status.ReadyReplicas != c.Spec.ReplicaCount():
			return fmt.Errorf("%d of %d servers ready", c.Status.ReadyReplicas, c.Spec.ReplicaCount())
		}
		return nil
	})
}

// serverPods reads the pods of f, by name, each of which must exist.
func serverPods(t *testing.T, f *formed) map[string]*corev1.Pod {
	t.Helper()
	out := map[string]*corev1.Pod{}
	for _, name := range f.Pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name}}
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}
