package plan

import (
	"fmt"
	"slices"
)

// RequestKind is what a user's request annotation asks for.
type RequestKind string

const (
	RequestStepDown RequestKind = "StepDown"
	RequestEvacuate RequestKind = "Evacuate"
)

// UserRequest is one request annotation: its value now, and the value
// last carried out.
type UserRequest struct {
	Kind           RequestKind
	Value, Carried string
	// Target is the server the value names ("" for none).
	Target string
}

// RequestStep is what to do about one request.
type RequestStep struct {
	Request UserRequest
	// Refused says why it cannot be carried out at all (it is recorded as
	// carried, with a Warning): retrying would not help.
	Refused string
}

// Requests decides which requests to carry out on a settled cluster of
// servers: a value not carried yet, naming (when it names one) a server
// of the cluster. An evacuation must name one, and leave at least one
// other server; a step-down needs two servers to hand over to.
func Requests(reqs []UserRequest, servers []string) []RequestStep {
	var out []RequestStep
	for _, r := range reqs {
		if r.Value == "" || r.Value == r.Carried {
			continue
		}
		step := RequestStep{Request: r}
		switch {
		case r.Target != "" && !slices.Contains(servers, r.Target):
			step.Refused = fmt.Sprintf("%q is not a server of this cluster (%v)", r.Target, servers)
		case r.Kind == RequestEvacuate && r.Target == "":
			step.Refused = "an evacuation names the server to empty"
		case len(servers) < 2:
			step.Refused = "a single server has no other to hand over to"
		}
		out = append(out, step)
	}
	return out
}

// RequestOutcome is what becomes of a request once a pass tried it.
type RequestOutcome int

const (
	// RequestDone: recorded as carried out.
	RequestDone RequestOutcome = iota
	// RequestRetry: not recorded, so the next settled pass tries it again
	// (the servers never took it: no answer, no system user).
	RequestRetry
	// RequestFailedOnce: recorded as carried out, with a Warning: the
	// servers took it and could not carry it through (an evacuation with
	// nowhere to go), and sending it again would fail the same way.
	RequestFailedOnce
)

// Outcome decides, from whether the servers took the step's request and
// the error, what becomes of it. A refused step is done: it is reported
// once and not retried.
func (s RequestStep) Outcome(taken bool, err error) RequestOutcome {
	switch {
	case s.Refused != "" || err == nil:
		return RequestDone
	case taken:
		return RequestFailedOnce
	}
	return RequestRetry
}
