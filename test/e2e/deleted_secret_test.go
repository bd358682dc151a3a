package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
)

// TestDeletedRouteSecretRollsNothing: the route password's Secret deleted
// under a running cluster is a Warning event and Ready False
// (GeneratedSecretMissing), and over a window no server is replaced or
// restarted and no new password appears; clients keep being served.
func TestDeletedRouteSecretRollsNothing(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "keep")
	before := snapshot(t, f)
	routes := &corev1.Secret{}
	if err := cluster.Client.Get(testCtx(t), types.NamespacedName{Namespace: ns, Name: "keep-routes"}, routes); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Delete(testCtx(t), routes); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(f.Cluster), f.Cluster); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(f.Cluster.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Reason != v1alpha1.ReasonGeneratedSecretMissing {
			return fmt.Errorf("Ready %+v, want GeneratedSecretMissing", ready)
		}
		if eventsWithReason(t, ns, v1alpha1.ReasonGeneratedSecretMissing) == 0 {
			return fmt.Errorf("no %s event yet", v1alpha1.ReasonGeneratedSecretMissing)
		}
		return nil
	})
	poll.Holds(t, 10*time.Second, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(routes), &corev1.Secret{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the routes Secret was made anew (%v)", err)
		}
		for _, pod := range f.Pods {
			p := &corev1.Pod{}
			if err := cluster.Client.Get(testCtx(t), types.NamespacedName{Namespace: ns, Name: pod}, p); err != nil {
				return err
			}
			if p.UID != before.pods[pod].UID || !p.DeletionTimestamp.IsZero() || natsStatus(p).RestartCount != 0 {
				return fmt.Errorf("%s was replaced, is going or restarted", pod)
			}
		}
		return nil
	})
	if err := everyServer(t, f, credentials(t, f)["password"], true); err != nil {
		t.Errorf("clients are no longer served: %v", err)
	}
}
