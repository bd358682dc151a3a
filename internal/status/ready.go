package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Pass is how one pass of a kind with Ready alone ended (the JetStream
// resources, a NatsAccount, a NatsUser).
type Pass struct {
	Ready bool
	// Stalled: not ready, and the operator cannot go on without
	// someone's change (the spec, a Secret, the server's refusal). False
	// while not ready: it works on, or waits for what comes by itself.
	Stalled         bool
	Reason, Message string
}

// Verdict is the pass's Ready verdict.
func (p Pass) Verdict() Verdict {
	return Verdict{Type: v1alpha1.ConditionReady, Status: boolStatus(p.Ready), Reason: p.Reason, Message: p.Message}
}

// ReadyConditions are the conditions of a kind with Ready alone: Ready,
// and what GitOps tools read beside it (Progress).
func ReadyConditions(prev []metav1.Condition, generation int64, now metav1.Time, p Pass) []metav1.Condition {
	return conditions(prev, generation, now, WithProgress(p.Verdict(), p.Stalled)...)
}

// Conditions are conditions from verdicts, in their order: what a kind
// with more than Ready (a NatsAccount's rotation) writes.
func Conditions(prev []metav1.Condition, generation int64, now metav1.Time, verdicts ...Verdict) []metav1.Condition {
	return conditions(prev, generation, now, verdicts...)
}
