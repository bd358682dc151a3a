package envtest_test

import (
	"fmt"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// finalizerPolicy is the MutatingAdmissionPolicy that config/admission
// installs to put the JetStream finalizer on new resources.
const finalizerPolicy = "kubenats-jetstream-finalizer"

// The installed policy puts the finalizer on a JetStream resource as the
// API server creates it, keeping the user's own finalizers, so the
// operator's only write to a new resource is its status.
func TestFinalizerAddedAtAdmission(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	objs := []client.Object{
		newStream(ns, "admitted", at(serverURL(s))),
		newConsumer(ns, "admitted", "ADMITTED", at(serverURL(s))),
		&v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admitted"},
			Spec: v1alpha1.KeyValueSpec{Bucket: "admitted", Target: at(serverURL(s))}},
		&v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admitted"},
			Spec: v1alpha1.ObjectStoreSpec{Bucket: "admitted", Target: at(serverURL(s))}},
	}
	for _, obj := range objs {
		obj.SetFinalizers([]string{"example.com/keep"})
		create(t, obj)
		// Create returns the object as stored: before any reconcile.
		if got := obj.GetFinalizers(); !slices.Equal(got, []string{"example.com/keep", v1alpha1.JetStreamFinalizer}) {
			t.Errorf("%T created with finalizers %v, want the user's and kubenats'", obj, got)
		}
		obj.SetFinalizers(nil) // let the namespace go
		if err := k8s.Patch(ctx(t), obj, client.RawPatch(client.Merge.Type(),
			[]byte(fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, v1alpha1.JetStreamFinalizer)))); err != nil {
			t.Fatal(err)
		}
	}
}

// Where the policy is not installed, the operator adds the finalizer
// itself before it touches the server.
//
// Not parallel: it deletes the policy's binding, which every test's
// JetStream resources are admitted through.
func TestFinalizerAddedWithoutThePolicy(t *testing.T) {
	binding := &admissionv1.MutatingAdmissionPolicyBinding{}
	if err := k8s.Get(ctx(t), client.ObjectKey{Name: finalizerPolicy}, binding); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx(t), binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restoreBinding(t, binding) })
	ns := namespace(t)
	// The API server unloads the binding asynchronously.
	eventually(t, wait, func() error {
		probe := newStream(ns, "probe", at("nats://127.0.0.1:4222"))
		if err := k8s.Create(ctx(t), probe, client.DryRunAll); err != nil {
			return err
		}
		if len(probe.Finalizers) != 0 {
			return fmt.Errorf("the policy still adds %v", probe.Finalizers)
		}
		return nil
	})

	s := natsServer(t, 0)
	st := newStream(ns, "unadmitted", at(serverURL(s)))
	create(t, st)
	if len(st.Finalizers) != 0 {
		t.Fatalf("created with finalizers %v while the policy was gone", st.Finalizers)
	}
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(st), st); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(st.Finalizers, v1alpha1.JetStreamFinalizer) {
		t.Fatalf("Ready without the finalizer: %v", st.Finalizers)
	}
}

// restoreBinding puts the binding back and waits until it is in force
// again, for the tests that follow.
func restoreBinding(t *testing.T, old *admissionv1.MutatingAdmissionPolicyBinding) {
	b := &admissionv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: old.Name}, Spec: old.Spec}
	if err := k8s.Create(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	eventually(t, wait, func() error {
		probe := newStream(ns, "probe", at("nats://127.0.0.1:4222"))
		if err := k8s.Create(ctx(t), probe, client.DryRunAll); err != nil {
			return err
		}
		if !slices.Contains(probe.Finalizers, v1alpha1.JetStreamFinalizer) {
			return fmt.Errorf("the restored policy is not in force yet")
		}
		return nil
	})
}
