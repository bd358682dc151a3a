package jetstreamcontroller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// jetStreamStatus is the status a pass leads to. What the pass did not
// observe (an unreachable server) keeps its last known value.
func jetStreamStatus(obj v1alpha1.JetStreamObject, prev *v1alpha1.JetStreamStatus, out outcome) v1alpha1.JetStreamStatus {
	next := *prev.DeepCopy()
	next.Conditions = status.ReadyConditions(prev.Conditions, obj.GetGeneration(), metav1.Now(), out.ready, out.reason, out.message)
	if out.observed != nil {
		next.ServerConfigHash = out.observed.Hash
		next.Cluster = out.observed.Cluster
	}
	if out.ready {
		next.ObservedGeneration = obj.GetGeneration()
	}
	return next
}

// resourceState is a JetStream resource's state for the gauges: the
// reason of its Ready condition ("Unknown" before it has one), a short,
// bounded set of words.
func resourceState(st v1alpha1.JetStreamStatus) string {
	if ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); ready != nil && ready.Reason != "" {
		return ready.Reason
	}
	return "Unknown"
}
