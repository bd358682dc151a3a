package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Progress is what a pass's Ready verdict says to GitOps tools, which read
// a custom resource's health with kstatus: nothing once Ready is True
// (Current), Stalled when the resource cannot go on without someone's
// change (Failed), Reconciling otherwise (InProgress). Either carries
// Ready's reason and message, so that a tool that shows only kstatus'
// answer still says why.
//
// kstatus reads, in order: metadata.deletionTimestamp (Terminating),
// status.observedGeneration against metadata.generation (InProgress while
// they differ), the first of Reconciling or Stalled that is True, and only
// then Ready. So every kind also writes status.observedGeneration on every
// pass that reaches a verdict, a refused one included: a refused spec
// whose generation was never marked observed reads InProgress forever,
// never Failed.
func Progress(ready Verdict, stalled bool) []Verdict {
	switch {
	case ready.Status == metav1.ConditionTrue:
		return nil
	case stalled:
		return []Verdict{{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: ready.Message}}
	}
	return []Verdict{{Type: v1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: ready.Message}}
}

// WithProgress is ready followed by its Progress verdict, then the rest:
// the verdicts of a kind whose Ready decides everything GitOps tools read.
func WithProgress(ready Verdict, stalled bool, rest ...Verdict) []Verdict {
	out := append([]Verdict{ready}, Progress(ready, stalled)...)
	return append(out, rest...)
}
