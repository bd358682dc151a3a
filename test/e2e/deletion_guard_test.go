package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestDeletionWaitsForDataAndUsers: a deleted NatsCluster whose stream
// holds messages stays, servers running, saying which stream holds how
// many messages, over a window; the same while a Stream of another
// namespace names it; purging the stream and deleting that resource let
// it go without a word from the user (one cluster), and the annotation
// kubenats.io/delete-with-data lets the other go with its messages. Both
// then lose every child, as TestDeletionCollectsChildren shows for
// clusters without data.
// Careless variant watched failing: a guard blind to the JetStream
// resources of other namespaces (the kept cluster goes while the Stream
// still names it). It would fail too for no guard (the cluster goes at
// once) and for a guard counting streams rather than messages (the purged
// cluster would stay).
func TestDeletionWaitsForDataAndUsers(t *testing.T) {
	e2ekit.Parallel(t, 45*time.Second)
	ns, other := namespace(t), namespace(t)
	diagnoseOnFailure(t, ns)
	one := func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To(int32(1))
		s.JetStream.AllowedNamespaces = []string{other}
	}
	purged, kept := formNamed(t, ns, "purged", one), formNamed(t, ns, "kept", one)
	ctx := testCtx(t)
	for _, f := range []*formed{purged, kept} {
		js := appJetStream(t, appConn(t, f, "guard", f.Pods...))
		if _, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "HELD", Subjects: []string{"held.>"}}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if _, err := js.Publish(ctx, "held.x", []byte("m")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A Stream of another namespace on purged.
	user := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "tenant"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "purged", Namespace: ns}},
			Name: "TENANT", Subjects: []string{"tenant.>"}, Replicas: 1}}
	if err := cluster.Client.Create(ctx, user); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, user, wait)

	for _, f := range []*formed{purged, kept} {
		if err := cluster.Client.Delete(ctx, f.Cluster); err != nil {
			t.Fatal(err)
		}
	}
	waitDeleting(t, kept.Cluster, plan.ReasonDeletionHeldByData, "HELD: 5")
	waitDeleting(t, purged.Cluster, plan.ReasonDeletionHeldByUsers, other+"/Stream/tenant")
	stays(t, kept, 3*time.Second)

	// purged: the tenant's Stream deleted (its finalizer deletes the
	// server's stream), then HELD purged: it goes by itself.
	if err := cluster.Client.Delete(ctx, user); err != nil {
		t.Fatal(err)
	}
	waitDeleting(t, purged.Cluster, plan.ReasonDeletionHeldByData, "HELD: 5")
	js := appJetStream(t, appConn(t, purged, "guard-purge", purged.Pods...))
	s, err := js.Stream(ctx, "HELD")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, purged.Cluster)

	// kept: still there, until the user's word.
	stays(t, kept, time.Second)
	eventually(t, 10*time.Second, func() error {
		get(t, kept.Cluster)
		kept.Cluster.Annotations = map[string]string{plan.AnnotationDeleteWithData: "true"}
		return cluster.Client.Update(ctx, kept.Cluster)
	})
	waitGone(t, kept.Cluster)
}

// waitDeleting waits for a deleted cluster's Deleting condition to have
// reason and to say say.
func waitDeleting(t *testing.T, c *v1alpha1.NatsCluster, reason, say string) {
	t.Helper()
	eventually(t, wait, func() error {
		get(t, c)
		d := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionDeleting)
		if d == nil || d.Reason != reason || !strings.Contains(d.Message, say) {
			return fmt.Errorf("%s Deleting %+v, want %s saying %q", c.Name, d, reason, say)
		}
		return nil
	})
}

// stays requires a deleted cluster and its servers to stay for window:
// every read finds the NatsCluster and its server pods.
func stays(t *testing.T, f *formed, window time.Duration) {
	t.Helper()
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		get(t, f.Cluster)
		for _, p := range serverPods(t, f) {
			if p == nil || !p.DeletionTimestamp.IsZero() {
				t.Fatalf("a server of %s went while its deletion was held", f.Cluster.Name)
			}
		}
	}
}

// waitGone waits for a NatsCluster to be gone.
func waitGone(t *testing.T, c *v1alpha1.NatsCluster) {
	t.Helper()
	eventually(t, formTimeout, func() error {
		err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), &v1alpha1.NatsCluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("NatsCluster %s still there (%v)", c.Name, err)
	})
}
