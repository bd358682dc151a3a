package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// accountScene is an account "app" of f (a cluster "nats" in mode jwt)
// with a user "svc" and a Stream EVENTS of the account holding ten
// messages: what the tests that replace or remove servers under an
// account start from.
type accountScene struct {
	f     *formed
	acct  *v1alpha1.NatsAccount
	creds string
	js    natsjs.JetStream
}

// startAccountScene makes the account with limits, its user and EVENTS
// with replicas, and publishes ten messages through the first server.
func startAccountScene(t *testing.T, f *formed, limits v1alpha1.AccountLimits, replicas int) *accountScene {
	t.Helper()
	ctx := testCtx(t)
	ref := v1alpha1.ClusterRef{Name: "nats"}
	acct := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "app"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: ref, Limits: limits}}
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "svc"}, Spec: v1alpha1.NatsUserSpec{Account: "app"}}
	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "events"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &ref, Account: "app"}, Name: "EVENTS", Subjects: []string{"ev.>"}, Replicas: replicas}}
	for _, o := range []client.Object{acct, user, stream} {
		if err := cluster.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	s := &accountScene{f: f, acct: acct, creds: waitCreds(t, user)}
	waitSynced(t, stream, wait)
	s.js = appJetStream(t, credsConn(t, f, f.Pods[0], s.creds))
	s.publish(t, "ev.x", 10)
	return s
}

// publish sends n messages to subject, each acknowledged.
func (s *accountScene) publish(t *testing.T, subject string, n int) {
	t.Helper()
	for range n {
		if _, err := s.js.Publish(testCtx(t), subject, []byte("e")); err != nil {
			t.Fatal(err)
		}
	}
}

// credsGetIn: the user's creds get in on each of pods; the last
// connection becomes the scene's JetStream.
func (s *accountScene) credsGetIn(t *testing.T, pods []string) {
	t.Helper()
	for _, p := range pods {
		s.js = appJetStream(t, credsConn(t, s.f, p, s.creds))
	}
}

// streamHolds waits until stream name holds ten messages, led by one of
// pods.
func (s *accountScene) streamHolds(t *testing.T, name string, pods []string) {
	t.Helper()
	eventually(t, wait, func() error {
		st, err := s.js.Stream(testCtx(t), name)
		if err != nil {
			return err
		}
		info, err := st.Info(testCtx(t))
		switch {
		case err != nil:
			return err
		case info.State.Msgs != 10:
			return fmt.Errorf("%s holds %d messages, want 10", name, info.State.Msgs)
		case info.Cluster == nil || !slices.Contains(pods, info.Cluster.Leader):
			return fmt.Errorf("%s led by %+v, want one of %v", name, info.Cluster, pods)
		}
		return nil
	})
}

// limitBites lowers the account's connection limit to one: the account
// is Ready for that generation (the push counted every ready server), and
// with the scene's connections open each of pods refuses the next.
func (s *accountScene) limitBites(t *testing.T, pods []string) {
	t.Helper()
	one := int64(1)
	patchAccount(t, s.acct, func(spec *v1alpha1.NatsAccountSpec) { spec.Limits.Connections = &one })
	eventually(t, wait, func() error {
		get(t, s.acct)
		r := meta.FindStatusCondition(s.acct.Status.Conditions, v1alpha1.ConditionReady)
		if s.acct.Status.ObservedGeneration != s.acct.Generation || r == nil || r.Status != metav1.ConditionTrue {
			return fmt.Errorf("account at generation %d: observed %d, Ready %+v", s.acct.Generation, s.acct.Status.ObservedGeneration, r)
		}
		return nil
	})
	for _, p := range pods {
		eventually(t, wait, func() error {
			_, err := connect(t, "tls://"+s.f.IP(p)+":4222", nats.UserCredentials(s.creds), addrTLS(t, s.f))
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "maximum account active connections exceeded") {
				return fmt.Errorf("%s: %v, want the limit's refusal", p, err)
			}
			return nil
		})
	}
}
