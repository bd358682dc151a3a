// Package wake holds the event filters the controllers share: which
// changes of an object wake a pass.
package wake

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// DeletionStarted passes the update that sets a deletion timestamp: a
// controller that otherwise wakes on spec changes alone must still run
// the pass that carries out its finalizer.
type DeletionStarted struct{ predicate.Funcs }

func (DeletionStarted) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}
