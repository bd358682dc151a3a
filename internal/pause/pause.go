// Package pause holds the one decision every controller reads before it
// changes anything: is this object paused, and why. Pure, so that the
// NatsCluster and the JetStream controllers cannot disagree on it.
package pause

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// Flag is the manager's flag that pauses every object of every kind.
const Flag = "pause-reconciliation"

// State says whether an object is paused. The zero State is not paused.
type State struct {
	Paused bool
	// Reason is v1alpha1.ReasonOperatorPaused or
	// ReasonReconciliationPaused; Message says how to resume.
	Reason, Message string
}

// Of is obj's pause: by the operator-wide switch (operatorPaused) first,
// since resuming the object alone would not resume it then, or by its own
// annotation. Only the exact value "true" pauses, as Strimzi reads its
// annotation: a typo ("yes", "True ") must not silently stop the operator.
func Of(obj metav1.Object, operatorPaused bool) State {
	annotated := Annotated(obj)
	switch {
	case operatorPaused && annotated:
		return State{Paused: true, Reason: v1alpha1.ReasonOperatorPaused,
			Message: "the operator runs with --" + Flag + ", and the object's annotation " + v1alpha1.AnnotationPauseReconciliation +
				" pauses it too: restart the operator without the flag and remove the annotation to resume"}
	case operatorPaused:
		return State{Paused: true, Reason: v1alpha1.ReasonOperatorPaused,
			Message: "the operator runs with --" + Flag + ": restart it without the flag to resume"}
	case annotated:
		return State{Paused: true, Reason: v1alpha1.ReasonReconciliationPaused,
			Message: "the annotation " + v1alpha1.AnnotationPauseReconciliation + "=true pauses it: remove the annotation to resume"}
	}
	return State{}
}

// Annotated reports whether obj's own annotation pauses it.
func Annotated(obj metav1.Object) bool {
	return obj.GetAnnotations()[v1alpha1.AnnotationPauseReconciliation] == "true"
}

// Verdict is the Paused condition of a paused object, for
// status.Conditions (which keeps its transition time while it holds).
func (s State) Verdict() status.Verdict {
	return status.Verdict{Type: v1alpha1.ConditionPaused, Status: metav1.ConditionTrue, Reason: s.Reason, Message: s.Message}
}
