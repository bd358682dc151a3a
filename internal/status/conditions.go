package status

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verdict is the state of one condition before it gets its timestamps.
type Verdict struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// conditions turns verdicts into conditions in the given order, keeping the
// transition time of each condition whose status did not change. Every
// message is bounded (BoundMessage): this is the one place conditions are
// made.
func conditions(prev []metav1.Condition, generation int64, now metav1.Time, verdicts ...Verdict) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(verdicts))
	for _, v := range verdicts {
		c := metav1.Condition{
			Type:               v.Type,
			Status:             v.Status,
			Reason:             v.Reason,
			Message:            BoundMessage(v.Message),
			ObservedGeneration: generation,
			LastTransitionTime: now,
		}
		if old := meta.FindStatusCondition(prev, v.Type); old != nil && old.Status == v.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

// boolStatus maps a bool to a condition status.
func boolStatus(ok bool) metav1.ConditionStatus {
	if ok {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}
