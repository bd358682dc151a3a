package plan

// The phases of a takeover of a chart release (v1alpha1.TakeoverPhase):
// its servers are replaced one at a time with routes still open as the
// chart's, then the routes close, every server at once.
const (
	TakeoverReplacingServers = "ReplacingServers"
	TakeoverClosingRoutes    = "ClosingRoutes"
	TakeoverComplete         = "Complete"
)

// TakeoverObservation is what the next phase of a takeover is decided from.
type TakeoverObservation struct {
	// Phase is the phase reached so far, "" before the chart's
	// StatefulSet was released.
	Phase string
	// Adopted: the chart's StatefulSet is gone and the cluster's own
	// stands in its place.
	Adopted bool
	// Servers are the cluster's server pods.
	Servers []Server
	// Want is the number of servers the spec asks for.
	Want int
	// Routes is the route mode of the current template.
	Routes string
	// Blocked: the pass reports something still under way or wrong
	// (a rollout waiting, a refusal): no phase ends while it does.
	Blocked bool
}

// TakeoverPhase is the phase the takeover is in after this pass. A phase
// ends only once every server the spec asks for runs the current template
// in its route mode and is ready, and nothing else is under way: the
// routes close only after the last of the chart's servers is gone (a
// server with closed routes and one of the chart's cannot route to each
// other), and the takeover is complete only once they are closed.
func TakeoverPhase(o TakeoverObservation) string {
	switch o.Phase {
	case "":
		if o.Adopted {
			return TakeoverReplacingServers
		}
		return ""
	case TakeoverReplacingServers:
		if o.allCurrent() {
			return TakeoverClosingRoutes
		}
	case TakeoverClosingRoutes:
		if o.allCurrent() {
			return TakeoverComplete
		}
	}
	return o.Phase
}

func (o TakeoverObservation) allCurrent() bool {
	if o.Blocked || !o.Adopted || len(o.Servers) != o.Want {
		return false
	}
	for _, s := range o.Servers {
		if s.Outdated || !s.Ready || s.Terminating || s.Routes != o.Routes {
			return false
		}
	}
	return true
}
