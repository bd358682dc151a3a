package v1alpha1

// AnnotationPauseReconciliation set to "true" on a NatsCluster, Stream,
// Consumer, KeyValue or ObjectStore pauses the operator for that object:
// it changes nothing (no child applied, no server written) and only
// observes and reports, with the condition Paused. Any other value, or
// none, resumes it. Strimzi's strimzi.io/pause-reconciliation, under our
// prefix.
const AnnotationPauseReconciliation = "kubenats.io/pause-reconciliation"

// ConditionPaused is True while the operator changes nothing for the
// object; it is absent otherwise. (The one condition whose True is not
// "good": it says what is so, as Kubernetes' own Deployment "Paused"
// does, and a paused object is healthy.)
const ConditionPaused = "Paused"

// Reasons of ConditionPaused.
const (
	// ReasonReconciliationPaused: the object's own annotation pauses it.
	ReasonReconciliationPaused = "ReconciliationPaused"
	// ReasonOperatorPaused: the operator runs with --pause-reconciliation.
	ReasonOperatorPaused = "OperatorPaused"
)
