package pause

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Changed passes an update that pauses or resumes the object by its
// annotation: a controller that otherwise wakes on spec changes alone
// must still run the pass that resumes (and picks up every change made
// meanwhile) or that reports Paused. Other annotations stay quiet.
type Changed struct{ predicate.Funcs }

// Update passes a change of the pause annotation's meaning.
func (Changed) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return false
	}
	return Annotated(e.ObjectOld) != Annotated(e.ObjectNew)
}

// Create, Delete and Generic are left to the controller's other
// predicates (predicate.Funcs passes them all).
