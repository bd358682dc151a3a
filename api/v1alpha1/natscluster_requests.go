package v1alpha1

import "strings"

// Requests a user makes of a running NatsCluster by annotation (kubectl
// kubenats sets them): each new value is carried out once, by the
// operator, once the cluster is settled, and recorded in status.carried.
// An annotation's value is the request; a suffix "@<anything>" makes a
// request of the same target new again (the plugin adds the time).
const (
	// AnnotationStepDown asks the JetStream meta leader to hand its
	// leadership over; a value naming a server ("nats-2@...") prefers
	// that server as the next leader.
	AnnotationStepDown = "kubenats.io/step-down"
	// AnnotationEvacuate names a server ("nats-1@...") whose stream and
	// consumer replicas move to the other servers, as before a node's
	// maintenance. The server keeps running; new streams may land on it
	// again.
	AnnotationEvacuate = "kubenats.io/evacuate"
)

// CarriedRequests are the request annotations' values last carried out.
type CarriedRequests struct {
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StepDown string `json:"stepDown,omitempty"`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Evacuate string `json:"evacuate,omitempty"`
}

// RequestTarget is the server a request's value names: the part before
// "@", "" when there is none.
func RequestTarget(value string) string {
	target, _, _ := strings.Cut(value, "@")
	return target
}
