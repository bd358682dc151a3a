package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestAccountsSurviveAScaleDown: an account, its user and an R1 stream of
// it on a four-server cluster in mode jwt, and a stream the user made on
// nats-3 (streams are made until placement puts one there), scaled to
// three servers: the evacuating scale-down moves the account's stream off
// nats-3 before it goes; afterwards the user's creds get in on every
// server left, both streams hold their messages, the moved one led by a
// server left, and a limit changed after the scale-down is taken:
// the account is Ready for its new generation, which a push counts only
// once every ready server answered, and each server left refuses the
// connection past the new limit.
// It would fail for a push that waits for the servers the cluster once
// had (the account's Ready would stay False, PushFailed) and for a
// scale-down that drops the removed server's stream; those variants were
// not run.
func TestAccountsSurviveAScaleDown(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Mode = v1alpha1.AuthJWT
		s.Replicas = ptr.To(int32(4))
	})
	ctx := testCtx(t)
	ref := v1alpha1.ClusterRef{Name: "nats"}
	acct := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: ref, Limits: v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{}}}}
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"}, Spec: v1alpha1.NatsUserSpec{Account: "app"}}
	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "events"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &ref, Account: "app"}, Name: "EVENTS", Subjects: []string{"ev.>"}, Replicas: 1}}
	for _, o := range []client.Object{acct, user, stream} {
		if err := cluster.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	creds := waitCreds(t, user)
	waitSynced(t, stream, wait)
	js := appJetStream(t, credsConn(t, f.IP(f.Pods[0]), creds))
	for i := 0; i < 10; i++ {
		if _, err := js.Publish(ctx, "ev.x", []byte("e")); err != nil {
			t.Fatal(err)
		}
	}

	leaving := onServer(t, js, f.Pods[3])
	for i := 0; i < 10; i++ {
		if _, err := js.Publish(ctx, leaving+".x", []byte("e")); err != nil {
			t.Fatal(err)
		}
	}

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
	for _, p := range left {
		credsConn(t, f.IP(p), creds)
	}
	js = appJetStream(t, credsConn(t, f.IP(left[1]), creds))
	for _, name := range []string{"EVENTS", leaving} {
		eventually(t, wait, func() error {
			s, err := js.Stream(ctx, name)
			if err != nil {
				return err
			}
			info, err := s.Info(ctx)
			switch {
			case err != nil:
				return err
			case info.State.Msgs != 10:
				return fmt.Errorf("%s after the scale-down: %d messages", name, info.State.Msgs)
			case info.Cluster == nil || !slices.Contains(left, info.Cluster.Leader):
				return fmt.Errorf("%s after the scale-down: led by %+v", name, info.Cluster)
			}
			return nil
		})
	}

	// A change after the scale-down: with the account's connections open
	// (those above and the operator's own), a limit of one refuses the
	// next on each server left.
	one := int64(1)
	patchAccount(t, acct, func(s *v1alpha1.NatsAccountSpec) { s.Limits.Connections = &one })
	eventually(t, wait, func() error {
		get(t, acct)
		if acct.Status.ObservedGeneration != acct.Generation {
			return fmt.Errorf("account generation %d not observed yet (%d)", acct.Generation, acct.Status.ObservedGeneration)
		}
		if r := meta.FindStatusCondition(acct.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionTrue {
			return fmt.Errorf("account not Ready: %+v", r)
		}
		return nil
	})
	for _, p := range left {
		eventually(t, wait, func() error {
			_, err := connect(t, "nats://"+f.IP(p)+":4222", nats.UserCredentials(creds))
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "maximum account active connections exceeded") {
				return fmt.Errorf("%s: %v, want the limit's refusal", p, err)
			}
			return nil
		})
	}
}

// onServer makes R1 streams through js until placement puts one on
// server, and returns its name: placement prefers the servers with the
// fewest streams, so each miss makes the next try likelier to hit.
func onServer(t *testing.T, js natsjs.JetStream, server string) string {
	t.Helper()
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("ON_%d", i)
		s, err := js.CreateStream(testCtx(t), natsjs.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: natsjs.FileStorage})
		if err != nil {
			t.Fatal(err)
		}
		if info := s.CachedInfo(); info.Cluster != nil && info.Cluster.Leader == server {
			t.Logf("stream %s on %s", name, server)
			return name
		}
	}
	t.Fatalf("placement put none of 8 streams on %s", server)
	return ""
}
