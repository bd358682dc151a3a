package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestAccountsSurviveARollingUpdate: an account, its user and an R3
// stream of it on a three-server cluster in mode jwt; every server is
// replaced by a gated rolling update (a pod template change: the same
// rollout as an upgrade; the older nats-server here, 2.14.10, answered
// "JetStream not enabled for account" to a JWT account's stream create,
// so the version stays); afterwards the user's creds get in on every
// server (each new pod found the account in the resolver's store on its
// claim, or from its peers), the stream holds its messages, and a limit
// changed after the update is pushed to every server.
// It would fail for pushes aimed at the servers the account was first
// pushed to (the replaced servers, with new pods, would keep the old
// limit and let the next connection in); that variant was not run.
func TestAccountsSurviveARollingUpdate(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Auth.Mode = v1alpha1.AuthJWT })
	ctx := testCtx(t)
	ref := v1alpha1.ClusterRef{Name: "nats"}
	disk := resource.MustParse("1Mi")
	acct := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: ref, Limits: v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: &disk}}}}
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"}, Spec: v1alpha1.NatsUserSpec{Account: "app"}}
	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "events"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &ref, Account: "app"}, Name: "EVENTS", Subjects: []string{"ev.>"}, Replicas: 3}}
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

	before := podUIDs(t, ns, f.Pods)
	c := f.Cluster
	eventually(t, wait, func() error {
		get(t, c)
		c.Spec.PodTemplate.Labels = map[string]string{"rolled": "yes"}
		return cluster.Client.Update(ctx, c)
	})
	eventually(t, upgradeTimeout, func() error {
		get(t, c)
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
			return fmt.Errorf("not Ready: %+v", meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady))
		}
		for _, name := range f.Pods {
			p := &corev1.Pod{}
			if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
				return err // between its deletion and its successor
			}
			if p.UID == before[name] {
				return fmt.Errorf("%s not replaced yet", name)
			}
		}
		return nil
	})

	for _, p := range f.Pods {
		credsConn(t, f.IP(p), creds)
	}
	js = appJetStream(t, credsConn(t, f.IP(f.Pods[2]), creds))
	eventually(t, wait, func() error {
		s, err := js.Stream(ctx, "EVENTS")
		if err != nil {
			return err
		}
		if info, err := s.Info(ctx); err != nil || info.State.Msgs != 10 {
			return fmt.Errorf("EVENTS after the upgrade: %v, %v", info, err)
		}
		return nil
	})

	// A change after the upgrade reaches every server: with five of the
	// account's connections open, a limit of one refuses the next on each.
	one := int64(1)
	patchAccount(t, acct, func(s *v1alpha1.NatsAccountSpec) { s.Limits.Connections = &one })
	for _, p := range f.Pods {
		eventually(t, wait, func() error {
			_, err := connect(t, "nats://"+f.IP(p)+":4222", nats.UserCredentials(creds))
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "maximum account active connections exceeded") {
				return fmt.Errorf("%s: %v, want the limit's refusal", p, err)
			}
			return nil
		})
	}
}
