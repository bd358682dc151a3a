package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// JetStreamConditions are a JetStream resource's conditions: Ready, with
// the reason the pass found.
func JetStreamConditions(prev []metav1.Condition, generation int64, now metav1.Time, ready bool, reason, message string) []metav1.Condition {
	return conditions(prev, generation, now, Verdict{
		Type: v1alpha1.ConditionReady, Status: boolStatus(ready), Reason: reason, Message: message,
	})
}

// ReadyConditions are the conditions of a kind with Ready alone (a
// NatsAccount, a NatsUser), with the reason the pass found.
func ReadyConditions(prev []metav1.Condition, generation int64, now metav1.Time, ready bool, reason, message string) []metav1.Condition {
	return JetStreamConditions(prev, generation, now, ready, reason, message)
}

// Conditions are conditions from verdicts, in their order: what a kind
// with more than Ready (a NatsAccount's rotation) writes.
func Conditions(prev []metav1.Condition, generation int64, now metav1.Time, verdicts ...Verdict) []metav1.Condition {
	return conditions(prev, generation, now, verdicts...)
}
