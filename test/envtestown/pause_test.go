package envtestown_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/poll"
)

// pausedWindow is how long the paused operator is watched making nothing.
const pausedWindow = 4 * time.Second

// An operator started with --pause-reconciliation makes nothing for a new
// NatsCluster, not even its deletion guard, over a window, and says so in
// the cluster's status (Paused, reason OperatorPaused). The same operator
// started again without the flag makes the cluster's children.
//
// Careless variants seen to fail here: the flag parsed but not handed to
// the NatsCluster controller (manager.New without OperatorPaused): the
// StatefulSet and Secrets came at once; the Paused condition written
// with the annotation's reason for both (pause.Of without the switch
// first): "Paused ... want True/OperatorPaused".
func TestOperatorPausedMakesNothing(t *testing.T) {
	ns := namespace(t, "paused")
	stopPaused := startStoppable(t, manager.Options{PauseReconciliation: true}, ns)
	c := oneServerCluster(t, ns)
	poll.Until(t, wait, func() error {
		var live v1alpha1.NatsCluster
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &live); err != nil {
			return err
		}
		p := meta.FindStatusCondition(live.Status.Conditions, v1alpha1.ConditionPaused)
		if p == nil || p.Status != metav1.ConditionTrue || p.Reason != v1alpha1.ReasonOperatorPaused {
			return fmt.Errorf("Paused %+v, want True/OperatorPaused", p)
		}
		return nil
	})
	poll.Holds(t, pausedWindow, func() error { return madeNothing(t, c) })
	stopPaused()

	startOperator(t, manager.Options{}, ns)
	poll.Until(t, wait, func() error {
		var live v1alpha1.NatsCluster
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &live); err != nil {
			return err
		}
		if meta.FindStatusCondition(live.Status.Conditions, v1alpha1.ConditionPaused) != nil {
			return fmt.Errorf("still paused: %+v", live.Status.Conditions)
		}
		var cm corev1.ConfigMap
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.ConfigMapName()}, &cm)
	})
}

// madeNothing is an error once anything of the operator's exists for c:
// a child (any Secret, ConfigMap or StatefulSet in its namespace) or its
// finalizer.
func madeNothing(t *testing.T, c *v1alpha1.NatsCluster) error {
	var live v1alpha1.NatsCluster
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &live); err != nil {
		return err
	}
	if len(live.Finalizers) > 0 {
		return fmt.Errorf("finalizers %v", live.Finalizers)
	}
	for _, list := range []client.ObjectList{&corev1.SecretList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}} {
		if err := k8s.List(context.Background(), list, client.InNamespace(c.Namespace)); err != nil {
			return err
		}
		if n := meta.LenList(list); n > 0 {
			return fmt.Errorf("%d objects of %T made", n, list)
		}
	}
	return nil
}

// startStoppable is startOperator with a stop the test calls itself,
// before starting another operator on the same namespace; the cleanup
// stops it if the test did not get that far.
func startStoppable(t *testing.T, o manager.Options, namespaces ...string) (stop func()) {
	t.Helper()
	o.WatchNamespaces = namespaces
	o.ServerAnswerBound = 10 * time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := inprocess.OperatorWith(ctx, operatorCfg, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := wait(); err != nil {
				t.Errorf("operator: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
