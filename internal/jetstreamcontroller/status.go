package jetstreamcontroller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/status"
)

// jetStreamStatus is the status a pass leads to. What the pass did not
// observe (an unreachable server) keeps its last known value. A paused
// resource has the Paused condition after Ready; a resumed one loses it.
func jetStreamStatus(obj v1alpha1.JetStreamObject, prev *v1alpha1.JetStreamStatus, out outcome, paused pause.State) v1alpha1.JetStreamStatus {
	next := *prev.DeepCopy()
	verdicts := []status.Verdict{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: out.reason, Message: out.message}}
	if out.ready {
		verdicts[0].Status = metav1.ConditionTrue
	}
	if paused.Paused {
		verdicts = append(verdicts, paused.Verdict())
	}
	next.Conditions = status.Conditions(prev.Conditions, obj.GetGeneration(), metav1.Now(), verdicts...)
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
