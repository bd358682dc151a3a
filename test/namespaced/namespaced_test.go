package namespaced_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

const wait = 30 * time.Second

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(ctx(t), obj); err != nil {
		t.Fatal(err)
	}
}

// readyReason is obj's Ready reason, "" while it has none.
func readyReason(t *testing.T, obj client.Object, conditions func() []metav1.Condition) (string, error) {
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
		return "", err
	}
	if c := meta.FindStatusCondition(conditions(), v1alpha1.ConditionReady); c != nil {
		return c.Reason, nil
	}
	return "", nil
}

// A NatsCluster in a watched namespace gets its servers, with no more RBAC
// than the RoleBinding there: every child is created and its status is
// written.
func TestClusterInAWatchedNamespace(t *testing.T) {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: watchedA, Name: "nats"}}
	create(t, c)
	poll.Until(t, wait, func() error {
		reason, err := readyReason(t, c, func() []metav1.Condition { return c.Status.Conditions })
		if err == nil && reason != v1alpha1.ReasonProgressing {
			err = fmt.Errorf("Ready reason %q, want Progressing", reason)
		}
		return err
	})
	for _, obj := range []client.Object{&appsv1.StatefulSet{}, &corev1.Secret{}, &corev1.Service{}} {
		obj.SetNamespace(watchedA)
		obj.SetName("nats")
		if s, ok := obj.(*corev1.Secret); ok {
			s.Name = "nats-system"
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T: %v", obj, err)
		}
	}
}

// A Stream in the other watched namespace reaches its NATS system with an
// opted-in Secret, read from the namespaced cache of such Secrets.
func TestStreamInAWatchedNamespace(t *testing.T) {
	s := testnats.Start(t, 0)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: watchedB, Name: "login", Labels: map[string]string{v1alpha1.SecretAllowLabel: "true"}},
		StringData: map[string]string{"token": ""},
	}
	create(t, secret)
	st := stream(watchedB, "orders", testnats.URL(s))
	st.Spec.Connection.CredentialsSecretRef = &v1alpha1.LocalRef{Name: "login"}
	create(t, st)
	poll.Until(t, wait, func() error {
		reason, err := readyReason(t, st, func() []metav1.Condition { return st.Status.Conditions })
		if err == nil && reason != "Synced" {
			err = fmt.Errorf("Ready reason %q, want Synced", reason)
		}
		return err
	})
}

// Outside the watched namespaces nothing is touched: a NatsCluster gets no
// child and no status, a Stream no finalizer and no server object; and a
// Stream in a watched namespace cannot use a cluster outside them.
func TestUnwatchedNamespacesAreLeftAlone(t *testing.T) {
	s := testnats.Start(t, 0)
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: unwatched, Name: "nats"},
		Spec: v1alpha1.NatsClusterSpec{JetStream: v1alpha1.JetStreamSpec{AllowedNamespaces: []string{"*"}}}}
	create(t, c)
	st := stream(unwatched, "ignored", testnats.URL(s))
	create(t, st)
	reaching := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: watchedA, Name: "reaching"}}
	reaching.Spec.Name, reaching.Spec.Subjects = "REACHING", []string{"reaching.>"}
	reaching.Spec.Cluster = &v1alpha1.ClusterRef{Namespace: unwatched, Name: "nats"}
	create(t, reaching)
	poll.Until(t, wait, func() error {
		reason, err := readyReason(t, reaching, func() []metav1.Condition { return reaching.Status.Conditions })
		if err == nil && reason != "NotAllowed" {
			err = fmt.Errorf("Ready reason %q, want NotAllowed", reason)
		}
		return err
	})

	poll.Holds(t, 3*time.Second, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if len(c.Status.Conditions) != 0 {
			return fmt.Errorf("the unwatched NatsCluster has a status: %+v", c.Status.Conditions)
		}
		var sts appsv1.StatefulSetList
		if err := k8s.List(ctx(t), &sts, client.InNamespace(unwatched)); err != nil || len(sts.Items) != 0 {
			return fmt.Errorf("StatefulSets in the unwatched namespace: %d (%v)", len(sts.Items), err)
		}
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(st), st); err != nil {
			return err
		}
		if len(st.Finalizers) != 0 || len(st.Status.Conditions) != 0 {
			return fmt.Errorf("the unwatched Stream was reconciled: finalizers %v, conditions %+v", st.Finalizers, st.Status.Conditions)
		}
		if n := s.NumClients(); n != 0 {
			return fmt.Errorf("the unwatched Stream's server has %d clients", n)
		}
		return nil
	})
}

func stream(ns, name, url string) *v1alpha1.Stream {
	st := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	st.Spec.Name, st.Spec.Subjects = name, []string{name + ".>"}
	st.Spec.Connection = &v1alpha1.Connection{Servers: []string{url}}
	return st
}
