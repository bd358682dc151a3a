package status

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

var pausedVerdict = Verdict{Type: v1alpha1.ConditionPaused, Status: metav1.ConditionTrue,
	Reason: v1alpha1.ReasonReconciliationPaused, Message: "remove the annotation to resume"}

// withReplicas gives a StatefulSet its spec's replica count.
func withReplicas(sts *appsv1.StatefulSet, n int32) *appsv1.StatefulSet {
	sts.Spec.Replicas = ptr.To(n)
	return sts
}

// TestPausedClusterReportsWhatRuns: a paused cluster whose spec asks for
// five servers while three run (scaled up meanwhile) is Ready by the three
// that run, its observedGeneration stays the one last acted on, Paused is
// there, and the conditions the paused pass does not look at keep their
// values. A cluster paused from its start is not Ready, by the pause's
// name. Careless variants caught: the spec's replicas wanted (Ready turns
// False, "3 of 5 servers updated", for a change nobody carries out), the
// generation advanced (kstatus would read the unapplied change as
// current), and MeshReady dropped (conditions() keeps only the verdicts
// it is given).
func TestPausedClusterReportsWhatRuns(t *testing.T) {
	mesh := metav1.Condition{Type: v1alpha1.ConditionMeshReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonMeshStrict, Message: "strict"}
	c := natsCluster(5, wasReady, func(c *v1alpha1.NatsCluster) {
		c.Generation = 6
		c.Status.ObservedGeneration = 5
		c.Status.Conditions = append(c.Status.Conditions, mesh)
	})
	st := NatsCluster(ClusterObservation{Cluster: c, StatefulSet: withReplicas(settled(3, 3), 3), Paused: &pausedVerdict, Now: now})
	if st.ObservedGeneration != 5 {
		t.Errorf("observedGeneration %d, want the 5 last acted on", st.ObservedGeneration)
	}
	if ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v, want True for the three servers that run", ready)
	}
	if p := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionPaused); p == nil || p.Status != metav1.ConditionTrue || p.Reason != v1alpha1.ReasonReconciliationPaused {
		t.Errorf("Paused %+v", p)
	}
	if m := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionMeshReady); m == nil || m.Reason != mesh.Reason {
		t.Errorf("MeshReady %+v, want it kept", m)
	}

	fresh := natsCluster(3, func(c *v1alpha1.NatsCluster) { c.Generation = 1 })
	st = NatsCluster(ClusterObservation{Cluster: fresh, Paused: &pausedVerdict, Now: now})
	ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.ReasonReconciliationPaused ||
		!strings.Contains(ready.Message, "does not exist") {
		t.Errorf("Ready of a cluster paused from its start: %+v", ready)
	}
	if st.ObservedGeneration != 0 {
		t.Errorf("observedGeneration %d of a cluster never acted on", st.ObservedGeneration)
	}
}

// TestResumedClusterLosesPaused: the first pass after the resume writes
// no Paused condition and the current generation.
func TestResumedClusterLosesPaused(t *testing.T) {
	c := natsCluster(3, wasReady, func(c *v1alpha1.NatsCluster) {
		c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionPaused, Status: metav1.ConditionTrue})
	})
	st := NatsCluster(ClusterObservation{Cluster: c, StatefulSet: settled(3, 3), Now: now})
	if meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionPaused) != nil || st.ObservedGeneration != c.Generation {
		t.Errorf("resumed: %+v", st)
	}
}
