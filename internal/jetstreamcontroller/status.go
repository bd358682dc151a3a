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
//
// Every pass that acts marks its generation observed, a refused one too:
// GitOps tools (kstatus) read a status whose observedGeneration lags as
// InProgress, so a refused spec must be observed for its Stalled to read
// as Failed. The generation the server holds is syncedGeneration. A
// paused pass acts on nothing: it marks a generation observed only when
// the server already holds it, so that a change made while paused reads
// as not current until the resume.
func jetStreamStatus(obj v1alpha1.JetStreamObject, prev *v1alpha1.JetStreamStatus, out outcome, paused pause.State, now metav1.Time) v1alpha1.JetStreamStatus {
	next := *prev.DeepCopy()
	p := status.Pass{
		Ready: out.ready,
		// What does not come by itself (retry) needs someone's change; a
		// paused resource waits for its resume.
		Stalled: !out.ready && !out.retry && !paused.Paused,
		Reason:  out.reason, Message: out.message,
	}
	verdicts := status.WithProgress(p.Verdict(), p.Stalled)
	if paused.Paused {
		verdicts = append(verdicts, paused.Verdict())
	}
	next.Conditions = status.Conditions(prev.Conditions, obj.GetGeneration(), now, verdicts...)
	if out.observed != nil {
		next.ServerConfigHash = out.observed.Hash
		next.Cluster = out.observed.Cluster
		next.Mirror = out.observed.Mirror
	}
	next.Restore = out.restore
	if !paused.Paused || out.ready {
		next.ObservedGeneration = obj.GetGeneration()
	}
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
