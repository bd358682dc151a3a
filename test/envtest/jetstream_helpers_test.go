package envtest_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// at is a target that reaches a NATS system by URL.
func at(url string) v1alpha1.Target {
	return v1alpha1.Target{Connection: &v1alpha1.Connection{Servers: []string{url}}}
}

func newStream(ns, name string, target v1alpha1.Target, edits ...func(*v1alpha1.StreamSpec)) *v1alpha1.Stream {
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	s.Spec.Target = target
	s.Spec.Name = name
	s.Spec.Subjects = []string{name + ".>"}
	for _, e := range edits {
		e(&s.Spec)
	}
	return s
}

func newConsumer(ns, name, stream string, target v1alpha1.Target, edits ...func(*v1alpha1.ConsumerSpec)) *v1alpha1.Consumer {
	c := &v1alpha1.Consumer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.Target = target
	c.Spec.StreamName = stream
	c.Spec.DurableName = name
	for _, e := range edits {
		e(&c.Spec)
	}
	return c
}

// jsReady waits until obj's Ready condition has the given status and reason
// and its status describes the current generation when Ready.
func jsReady(t *testing.T, obj v1alpha1.JetStreamObject, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		st := obj.GetJetStreamStatus()
		c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("%s: Ready %+v, want %s/%s", obj.GetName(), c, status, reason)
		}
		if status == metav1.ConditionTrue && st.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("%s: observedGeneration %d, generation %d", obj.GetName(), st.ObservedGeneration, obj.GetGeneration())
		}
		return nil
	})
}
