package envtestown_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// pausedWindow is how long the paused operator is watched making nothing.
const pausedWindow = 4 * time.Second

// An operator started with --pause-reconciliation makes nothing for a new
// NatsCluster, not even its deletion guard, and no stream on the servers
// for a new Stream, over a window, and says so in both statuses (Paused,
// reason OperatorPaused). The same operator started again without the
// flag makes the cluster's children and the stream.
//
// Careless variants seen to fail here: the flag parsed but not handed to
// the NatsCluster controller (manager.New without its OperatorPaused):
// "Paused nil, want True/OperatorPaused", the cluster's children made
// meanwhile; nor to the JetStream controllers: "the Stream's Paused nil";
// the switch reported with the annotation's reason
// (pause.Of's operator-only case): "Reason:ReconciliationPaused ... want
// True/OperatorPaused".
func TestOperatorPausedMakesNothing(t *testing.T) {
	ns := namespace(t, "paused")
	stopPaused := startStoppable(t, manager.Options{PauseReconciliation: true}, ns)
	c := oneServerCluster(t, ns)
	s := testnats.Start(t, 0)
	st := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}}
	st.Spec.Name, st.Spec.Subjects = "orders", []string{"orders.>"}
	st.Spec.Target.Connection = &v1alpha1.Connection{Servers: []string{testnats.URL(s)}}
	if err := k8s.Create(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		var live v1alpha1.Stream
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(st), &live); err != nil {
			return err
		}
		p := meta.FindStatusCondition(live.Status.Conditions, v1alpha1.ConditionPaused)
		if p == nil || p.Status != metav1.ConditionTrue || p.Reason != v1alpha1.ReasonOperatorPaused {
			return fmt.Errorf("the Stream's Paused %+v, want True/OperatorPaused", p)
		}
		return nil
	})
	j := testnats.JetStream(t, s)
	noStream := func() error {
		if _, err := j.Stream(context.Background(), "orders"); !errors.Is(err, js.ErrStreamNotFound) {
			return fmt.Errorf("the stream on the server: %v", err)
		}
		return nil
	}
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
	poll.Holds(t, pausedWindow, func() error { return errors.Join(madeNothing(t, c), noStream()) })
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
	poll.Until(t, wait, func() error {
		_, err := j.Stream(context.Background(), "orders")
		return err
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
