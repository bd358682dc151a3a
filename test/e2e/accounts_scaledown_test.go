package e2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestAccountsSurviveAScaleDown: an account, its user and an R1 stream of
// it on a four-server cluster in mode jwt, and a stream of the user's on
// nats-3 (EVENTS if it is there, else one made until placement puts one
// there), scaled to three servers: the evacuating scale-down moves the
// account's stream off nats-3 before it goes; afterwards the user's creds
// get in on every server left, the streams hold their messages, the moved
// one led by a server left, and a limit changed after the scale-down is
// taken:
// the account is Ready for its new generation, which a push counts only
// once every ready server answered, and each server left refuses the
// connection past the new limit.
// It would fail for a push that waits for the servers the cluster once
// had (the account's Ready would stay False, PushFailed) and for a
// scale-down that drops the removed server's stream; those variants were
// not run.
func TestAccountsSurviveAScaleDown(t *testing.T) {
	e2ekit.Parallel(t, 50*time.Second)
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Mode = v1alpha1.AuthJWT
		s.Replicas = ptr.To(int32(4))
	})
	scene := startAccountScene(t, f, v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{}}, 1)
	// Placement picks only servers the meta group counts current: a
	// clean CI run placed none of 16 streams on nats-3 right after Ready.
	metaGroupOf(t, f, f.Pods)
	leaving := scene.streamOn(t, f.Pods[3])

	ctx := testCtx(t)
	c := f.Cluster
	setReplicas(t, c, 3)
	eventually(t, upgradeTimeout, func() error {
		get(t, c)
		if c.Status.ObservedGeneration != c.Generation || c.Status.ReadyReplicas != 3 ||
			!meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
			return fmt.Errorf("not scaled down yet: generation %d observed %d, %d ready, Ready %+v", c.Generation,
				c.Status.ObservedGeneration, c.Status.ReadyReplicas, meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady))
		}
		err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: f.Pods[3]}, &corev1.Pod{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s still there (%v)", f.Pods[3], err)
		}
		return nil
	})

	left := f.Pods[:3]
	scene.credsGetIn(t, left)
	for _, name := range slices.Compact([]string{"EVENTS", leaving}) {
		scene.streamHolds(t, name, left)
	}
	scene.limitBites(t, left)
}

// streamOn returns an R1 stream of the scene's account led by server and
// holding ten messages: EVENTS if placement put it there, else a new
// stream made until placement puts one there. Placement ranks servers by
// the free storage of their last statsz first and by fewest streams only
// among equals: once a server reports EVENTS' messages no new stream
// lands on it (a CI run placed none of 16 on nats-3 that way), while
// among the empty servers each miss makes the next try likelier to hit.
func (s *accountScene) streamOn(t *testing.T, server string) string {
	t.Helper()
	leader, err := groupLeader(s.js.Conn(), "$JS.API.STREAM.INFO.EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	if leader == server {
		t.Logf("EVENTS on %s", server)
		return "EVENTS"
	}
	for i := range 16 {
		name := fmt.Sprintf("ON_%d", i)
		st := createStream(t, s.js, natsjs.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: natsjs.FileStorage})
		if info := st.CachedInfo(); info.Cluster != nil && info.Cluster.Leader == server {
			t.Logf("stream %s on %s", name, server)
			s.publish(t, name+".x", 10)
			return name
		}
	}
	t.Fatalf("placement put none of 16 streams on %s", server)
	return ""
}
