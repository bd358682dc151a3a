package envtest_test

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestFinalizerReleasedWhenTheNamespaceIsNoLongerAllowed: a Stream in
// namespace other uses a cluster that allowed other, then stops allowing
// it. Deleting the Stream cannot reach the cluster any more, and never will
// by itself: the finalizer goes with a Warning event, and the server stream
// stays.
func TestFinalizerReleasedWhenTheNamespaceIsNoLongerAllowed(t *testing.T) {
	t.Parallel()
	home, other := namespace(t), namespace(t)
	s := natsServer(t, 0)
	clusterAt(t, home, "shared", s, other)
	st := newStream(other, "orphaned", v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Namespace: home, Name: "shared"}})
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")

	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: "shared"}}
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.AllowedNamespaces = nil })
	jsReady(t, st, metav1.ConditionFalse, "NotAllowed")

	deleteAndWait(t, st)
	eventually(t, wait, func() error {
		return eventAbout(t, st, "FinalizerReleased", "does not list namespace")
	})
	if _, err := serverStream(t, testnats.JetStream(t, s), "orphaned"); err != nil {
		t.Fatalf("the server stream went although the operator could not reach it as the resource: %v", err)
	}
}

// TestFinalizerReleasedInATerminatingNamespace: the NATS system a Stream
// names is down when its namespace is deleted. The namespace must not stay
// Terminating for as long as NATS is away: the finalizer goes, and the
// stream, which the operator could not delete, is still there when NATS
// comes back.
func TestFinalizerReleasedInATerminatingNamespace(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	port, dir := freePort(t), t.TempDir()
	keepStore := func(o *server.Options) { o.StoreDir = dir }
	s := testnats.Start(t, port, keepStore)
	st := newStream(ns, "stranded", at(serverURL(s)))
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	s.Shutdown()
	s.WaitForShutdown()

	// There is no namespace controller in this suite: the test deletes the
	// namespace, then its Stream, as that controller would.
	if err := k8s.Delete(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		var n corev1.Namespace
		if err := k8s.Get(ctx(t), client.ObjectKey{Name: ns}, &n); err != nil {
			return err
		}
		if n.Status.Phase != corev1.NamespaceTerminating {
			return fmt.Errorf("namespace phase %s", n.Status.Phase)
		}
		return nil
	})
	deleteAndWait(t, st)

	s = testnats.Start(t, port, keepStore)
	if _, err := serverStream(t, testnats.JetStream(t, s), "stranded"); err != nil {
		t.Fatalf("the stream the operator could not delete is gone: %v", err)
	}
}
