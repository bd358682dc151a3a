package envtest_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestKstatusReadsANatsClusterInEachPhase: what GitOps tools (kstatus,
// on the live object) make of a NatsCluster as it forms, becomes Ready,
// rolls a change out, meets a spec it refuses and gets it fixed. No pod
// runs here: the StatefulSet's status is written as its controller would
// (serversReady), and a rollout is seen where the StatefulSet controller
// has not caught up with the operator's change. A Ready cluster of real
// servers is checked in every e2e formation (e2ekit.KstatusCurrent).
//
// Careless variants, each run: Stalled never written (the refused spec
// reads InProgress: kstatus falls back on Ready False); Reconciling
// written whatever Ready says (the Ready cluster reads InProgress).
func TestKstatusReadsANatsClusterInEachPhase(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats")
	create(t, c)
	kstatusIs(t, c, kstatus.InProgressStatus, v1alpha1.ReasonProgressing)

	serversReady(t, c)
	kstatusIs(t, c, kstatus.CurrentStatus, v1alpha1.ReasonReady)

	// A change of the pod template: the StatefulSet rolls it out.
	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.PodTemplate.Annotations = map[string]string{"team": "payments"} })
	kstatusIs(t, c, kstatus.InProgressStatus, v1alpha1.ReasonProgressing)

	// A value nats-server would refuse: nothing is applied, the user must act.
	update(t, c, func(c *v1alpha1.NatsCluster) {
		c.Spec.Config = map[string]apiextensionsv1.JSON{"max_connections": {Raw: []byte(`"many"`)}}
	})
	kstatusIs(t, c, kstatus.FailedStatus, "ConfigInvalid")
	if c.Status.ObservedGeneration != c.Generation || c.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("observedGeneration %d of %d, phase %s", c.Status.ObservedGeneration, c.Generation, c.Status.Phase)
	}
	stalledSays(t, c.Status.Conditions)

	update(t, c, func(c *v1alpha1.NatsCluster) { c.Spec.Config = nil })
	kstatusIs(t, c, kstatus.InProgressStatus, v1alpha1.ReasonProgressing)
	serversReady(t, c)
	kstatusIs(t, c, kstatus.CurrentStatus, v1alpha1.ReasonReady)
}
