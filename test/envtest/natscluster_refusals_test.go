package envtest_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func TestScaleDownInTokenModeIsRefusedNotAttempted(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Mode = v1alpha1.AuthToken
		s.Replicas = ptr.To[int32](5)
	})
	create(t, c)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
	get(t, sts)

	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.Replicas = ptr.To[int32](3) })
	c = readyCondition(t, c, metav1.ConditionFalse, "ScaleDownRefused")
	if msg := c.Status.Conditions[0].Message; !strings.Contains(msg, "system account") {
		t.Fatalf("message %q does not say why", msg)
	}
	// The user has to act: GitOps tools read it as Failed (careless
	// variant, run: the refusal left a non-fatal blocker, read InProgress).
	kstatusIs(t, c, kstatus.FailedStatus, "ScaleDownRefused")
	eventually(t, wait, func() error { return eventWithReason(t, ns, "ScaleDownRefused") })
	get(t, sts)
	if got := *sts.Spec.Replicas; got != 5 {
		t.Fatalf("StatefulSet replicas = %d after a refused scale-down, want 5", got)
	}
}

// A key admission allows with a value nats-server refuses: the operator's
// check catches it. (A key off the allow-list never gets this far; the
// operator refuses it too, as render's tests show.)
func TestPassthroughTypoIsReportedBeforeAnyServerSeesIt(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Config = map[string]apiextensionsv1.JSON{"max_connections": {Raw: []byte(`"many"`)}}
	})
	create(t, c)
	c = readyCondition(t, c, metav1.ConditionFalse, "ConfigInvalid")
	if msg := c.Status.Conditions[0].Message; !strings.Contains(msg, "max_connections") {
		t.Fatalf("message %q does not name the bad key", msg)
	}
	if c.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("phase = %s, want Failed", c.Status.Phase)
	}
	// Nothing was applied: no server can start with the broken file.
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}), &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Fatalf("StatefulSet lookup = %v, want NotFound", err)
	}
}
