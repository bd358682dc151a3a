package envtest_test

import (
	"fmt"
	"net"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestKstatusReadsAccountsAndUsersInEachPhase: what GitOps tools (kstatus,
// on the live objects) make of a NatsAccount and its NatsUser: in
// progress while the cluster has no server to take the account, current
// once a real nats-server in mode jwt took it and the user has
// credentials, failed (both) when the cluster does not admit the
// account's namespace, which only a change of the cluster or the account
// lifts. A user in progress (its account gone, which admission lets no
// user name from the start) is TestAccountPassStallsOnlyWhatNeedsAChange's.
//
// Careless variants, each run: ClusterNotAdmitted not among the reasons
// that stall (both read InProgress forever); a user of a stalled account
// left in progress (the user reads InProgress).
func TestKstatusReadsAccountsAndUsersInEachPhase(t *testing.T) {
	t.Parallel()
	platform, tenant, outsider := namespace(t), namespace(t), namespace(t)
	c, trust := jwtCluster(t, platform, func(from *v1alpha1.AccountsFrom) { from.Namespaces = []string{tenant} })

	acct, user := natsAccount(tenant, "app", c), natsUser(tenant, "app", "app")
	create(t, acct)
	create(t, user)
	kstatusIs(t, acct, kstatus.InProgressStatus, v1alpha1.ReasonPushFailed)
	// Its user has credentials before the servers take the account.
	kstatusIs(t, user, kstatus.CurrentStatus, v1alpha1.ReasonReady)

	s := jwtServer(t, trust, c.StatefulSetName()+"-0")
	serversReady(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: c.StatefulSetName()}}
	get(t, sts)
	ip := loopbackNet() + "1"
	mapHost(t, net.JoinHostPort(ip, fmt.Sprint(render.ClientPort)), s.Addr().String())
	serverPod(t, c, c.StatefulSetName()+"-0", "r1", ip, sts)
	kstatusIs(t, acct, kstatus.CurrentStatus, v1alpha1.ReasonReady)
	kstatusIs(t, user, kstatus.CurrentStatus, v1alpha1.ReasonReady)

	// A namespace the cluster does not admit.
	refused, refusedUser := natsAccount(outsider, "app", c), natsUser(outsider, "app", "app")
	create(t, refused)
	create(t, refusedUser)
	kstatusIs(t, refused, kstatus.FailedStatus, v1alpha1.ReasonClusterNotAdmitted)
	stalledSays(t, refused.Status.Conditions)
	kstatusIs(t, refusedUser, kstatus.FailedStatus, v1alpha1.ReasonAccountNotFound)
	if refused.Status.ObservedGeneration != refused.Generation {
		t.Fatalf("observedGeneration %d of %d", refused.Status.ObservedGeneration, refused.Generation)
	}
}
