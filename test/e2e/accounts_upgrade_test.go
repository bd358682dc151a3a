package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
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
	e2ekit.Parallel(t, 50*time.Second)
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Auth.Mode = v1alpha1.AuthJWT })
	disk := resource.MustParse("1Mi")
	scene := startAccountScene(t, f, v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: &disk}}, 3)

	ctx := testCtx(t)
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

	scene.credsGetIn(t, f.Pods)
	scene.streamHolds(t, "EVENTS", f.Pods)
	scene.limitBites(t, f.Pods)
}
