package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/loopback"
)

// namespaceWatch records when this process saw the pods of a namespace
// and its NatsCluster turn Ready, from watch events: they arrive
// milliseconds after the API server stored the change, much finer than a
// condition's lastTransitionTime.
type namespaceWatch struct {
	ctx context.Context // ends with the benchmark
	mu  sync.Mutex
	// podReady is each pod's latest turn to Ready up to the NatsCluster's.
	podReady     map[string]time.Time
	wasReady     map[string]bool
	clusterReady time.Time
	timeline     formationTimeline
	readyCh      chan struct{} // closed when the NatsCluster is first Ready
}

// watchNamespace watches the pods and NatsClusters of ns until the
// benchmark ends.
func watchNamespace(b testing.TB, lc *loopback.Cluster, ns string) *namespaceWatch {
	b.Helper()
	w := &namespaceWatch{podReady: map[string]time.Time{}, wasReady: map[string]bool{}, readyCh: make(chan struct{}), timeline: newFormationTimeline()}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	w.ctx = ctx
	if err := lc.WatchNamespace(ctx, ns, func(ev watch.Event, at time.Time) {
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			w.observe(ev.Object, at)
		}
	}, &corev1.PodList{}, &v1alpha1.NatsClusterList{}, &appsv1.StatefulSetList{},
		&corev1.SecretList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *namespaceWatch) observe(obj any, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timeline.observe(obj, at)
	switch o := obj.(type) {
	case *corev1.Pod:
		ready := loopback.PodReady(o)
		// A turn to Ready after the NatsCluster's (a pod restarted) is not
		// the one its Ready followed.
		if ready && !w.wasReady[o.Name] && (w.clusterReady.IsZero() || !at.After(w.clusterReady)) {
			w.podReady[o.Name] = at
		}
		w.wasReady[o.Name] = ready
	case *v1alpha1.NatsCluster:
		if w.clusterReady.IsZero() && meta.IsStatusConditionTrue(o.Status.Conditions, v1alpha1.ConditionReady) {
			w.clusterReady = at
			close(w.readyCh)
		}
	}
}
