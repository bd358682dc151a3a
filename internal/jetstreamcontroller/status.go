package jetstreamcontroller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// jetStreamStatus is the status a pass leads to. What the pass did not
// observe (an unreachable server) keeps its last known value.
//
// Every pass marks its generation observed, a refused one too: GitOps
// tools (kstatus) read a status whose observedGeneration lags as
// InProgress, so a refused spec must be observed for its Stalled to read
// as Failed. The generation the server holds is syncedGeneration.
func jetStreamStatus(obj v1alpha1.JetStreamObject, prev *v1alpha1.JetStreamStatus, out outcome, now metav1.Time) v1alpha1.JetStreamStatus {
	next := *prev.DeepCopy()
	next.Conditions = status.ReadyConditions(prev.Conditions, obj.GetGeneration(), now, status.Pass{
		Ready: out.ready,
		// What does not come by itself (retry) needs someone's change.
		Stalled: !out.ready && !out.retry,
		Reason:  out.reason, Message: out.message,
	})
	if out.observed != nil {
		next.ServerConfigHash = out.observed.Hash
		next.Cluster = out.observed.Cluster
	}
	next.ObservedGeneration = obj.GetGeneration()
	next.SyncedGeneration = syncedGeneration(prev)
	if out.ready {
		next.SyncedGeneration = obj.GetGeneration()
	}
	return next
}

// syncedGeneration is the generation whose spec the server holds. A status
// written before syncedGeneration existed marked observedGeneration only
// when the server held it: that is the synced generation, for a resource
// ever synced (it has a server hash).
func syncedGeneration(st *v1alpha1.JetStreamStatus) int64 {
	if st.SyncedGeneration == 0 && st.ServerConfigHash != "" {
		return st.ObservedGeneration
	}
	return st.SyncedGeneration
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
