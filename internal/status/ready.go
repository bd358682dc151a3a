package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ReadyConditions are the conditions of a kind with Ready alone (the
// JetStream resources, a NatsAccount, a NatsUser), with the reason the
// pass found.
func ReadyConditions(prev []metav1.Condition, generation int64, now metav1.Time, ready bool, reason, message string) []metav1.Condition {
	return conditions(prev, generation, now, Verdict{
		Type: v1alpha1.ConditionReady, Status: boolStatus(ready), Reason: reason, Message: message,
	})
}

// Conditions are conditions from verdicts, in their order: what a kind
// with more than Ready (a NatsAccount's rotation) writes.
func Conditions(prev []metav1.Condition, generation int64, now metav1.Time, verdicts ...Verdict) []metav1.Condition {
	return conditions(prev, generation, now, verdicts...)
}
