package plan

import (
	"fmt"
	"sort"
)

// Server is one server as a rollout sees it.
type Server struct {
	Name string
	// Outdated: its pod runs an older template than the StatefulSet's.
	Outdated bool
	// Ready: its pod passes the readiness probe.
	Ready bool
	// Terminating: its pod is being deleted.
	Terminating bool
	// Routes is its route mode (render.RouteMode: what its routes demand
	// of a peer). Servers of different modes do not route to each other.
	Routes string
	// Trouble is why its pod cannot become ready as its status tells
	// (unschedulable, an image that cannot be pulled, a crash loop, or
	// not ready for too long); "" when nothing is known to be wrong.
	Trouble string
	// Hung is why a server whose pod passes its probes counts as hung (it
	// did not answer the operator within a bound: stopped, or cut off);
	// "" when it answers.
	Hung string
	// Behind is why the server's own Raft view says it is not current
	// (what its /healthz names: a stream catching up, the meta group not
	// reached); "" when it says it is. The leader's view of a follower
	// (RolloutObservation.Unsettled) counts the entries the follower
	// stored, within a margin for those in flight; only the follower knows
	// whether it applied them, and whether it is still catching up from a
	// snapshot. Replacing another server while one is behind leaves its
	// groups one current replica short of quorum.
	Behind string
}

// RolloutObservation is what one rollout decision is made from.
type RolloutObservation struct {
	Servers []Server
	// Want is the number of servers the spec asks for.
	Want int
	// Routes is the route mode of the current template.
	Routes string
	// Unsettled names what keeps the Raft groups from being settled, "" when
	// they are (or when there is no JetStream to settle).
	Unsettled string
	// MetaLeader is the JetStream meta leader, "" when unknown.
	MetaLeader string
}

// Action is what a step does.
type Action int

const (
	// Wait: nothing to do now (Step.Waiting says why), or nothing at all.
	Wait Action = iota
	// Replace deletes one outdated server's pod.
	Replace
	// ReplaceAll deletes every outdated server's pod at once.
	ReplaceAll
	// Evacuate asks the meta leader to move every stream and consumer
	// replica off one server.
	Evacuate
	// StepDown asks the meta leader, one server, to hand leadership over,
	// preferably to Step.To.
	StepDown
	// RemoveServer takes one server, the highest, out of the StatefulSet.
	RemoveServer
	// RemovePeer removes a server that is gone from the JetStream meta group.
	RemovePeer
)

// Step is the one next thing a rollout or a scale-down does.
type Step struct {
	Action  Action
	Servers []string
	// To is where a StepDown prefers leadership to go.
	To string
	// Waiting says what the rollout waits for; "" when it acts or is done.
	Waiting string
	// Halted: it waits on a server of the new revision that is in trouble,
	// which will not clear by itself; the change must be fixed or reverted.
	Halted bool
	// Refused: what the spec asks cannot be done safely; it waits for the
	// spec (or the streams) to change.
	Refused bool
}

// Done reports whether there is nothing to roll out.
func (s Step) Done() bool { return s.Action == Wait && s.Waiting == "" }

// Rollout decides the next step of replacing outdated servers:
//   - an outdated server that is not ready serves nothing: replacing it
//     costs nothing, and waiting for it would wait forever on a change that
//     was reverted;
//   - a change of route TLS cannot go one server at a time (servers with and
//     without it do not route to each other): once the cluster is settled,
//     every outdated server goes at once, and if the cluster is split
//     already (some run the new mode), the rest go at once too;
//   - a server on the new revision that is in trouble (it cannot be
//     scheduled, its image cannot be pulled) halts the rollout: the change
//     is broken, and replacing more servers would break them too;
//   - otherwise one server at a time, only when every server exists and is
//     ready and every Raft group is settled, highest ordinal first, the meta
//     leader last, so that leadership moves once;
//   - and only once every server says, in its own Raft view, that it is
//     current: a follower that was stopped or cut off catches up after it
//     answers again, and its leader counts it current before it has
//     applied what it missed;
//   - and before all of that: nothing while a server hangs. Its pod looks
//     ready, so the cluster has one server less than its pods say, and a
//     replacement would take away a second; it may resume any moment (the
//     kubelet restarts it if its liveness probe fails, and it is then not
//     ready, which the rules above cover).
func Rollout(o RolloutObservation) Step {
	outdated := o.outdated()
	if len(outdated) == 0 {
		return Step{}
	}
	if s, ok := o.hung(); ok {
		return Step{Waiting: fmt.Sprintf("waiting for server %s, which %s; no server is replaced while one hangs", s.Name, s.Hung)}
	}
	for _, s := range outdated {
		if !s.Ready && !s.Terminating {
			return Step{Action: Replace, Servers: []string{s.Name}}
		}
	}
	if o.routeTLSChanges(outdated) {
		return o.transition(outdated)
	}
	if s, ok := o.broken(); ok {
		return Step{Halted: true, Waiting: fmt.Sprintf("halted: server %s of the new revision is not ready (%s); "+
			"no other server is replaced until it is, and reverting the change replaces it", s.Name, s.Trouble)}
	}
	if why := o.notAllUp(); why != "" {
		return Step{Waiting: why}
	}
	if s, ok := o.behind(); ok {
		return Step{Waiting: behindMessage(s)}
	}
	if o.Unsettled != "" {
		return Step{Waiting: "waiting for JetStream to settle: " + o.Unsettled}
	}
	sortByOrdinalDescending(outdated)
	for _, s := range outdated {
		if s.Name != o.MetaLeader {
			return Step{Action: Replace, Servers: []string{s.Name}}
		}
	}
	return Step{Action: Replace, Servers: []string{outdated[0].Name}}
}

// transition moves the whole cluster to the new route mode at once.
func (o RolloutObservation) transition(outdated []Server) Step {
	split := false
	for _, s := range o.Servers {
		if !s.Terminating && !s.Outdated && s.Routes == o.Routes {
			split = true
		}
	}
	if !split {
		if why := o.notAllUp(); why != "" {
			return Step{Waiting: "route TLS change: " + why}
		}
		if s, ok := o.behind(); ok {
			return Step{Waiting: "route TLS change: " + behindMessage(s)}
		}
		if o.Unsettled != "" {
			return Step{Waiting: "route TLS change: waiting for JetStream to settle: " + o.Unsettled}
		}
	}
	var names []string
	for _, s := range outdated {
		if !s.Terminating {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return Step{Waiting: "route TLS change: waiting for the servers to stop"}
	}
	sort.Strings(names)
	return Step{Action: ReplaceAll, Servers: names}
}

func (o RolloutObservation) outdated() []Server {
	var out []Server
	for _, s := range o.Servers {
		if s.Outdated {
			out = append(out, s)
		}
	}
	return out
}

func (o RolloutObservation) routeTLSChanges(outdated []Server) bool {
	for _, s := range outdated {
		if s.Routes != o.Routes {
			return true
		}
	}
	return false
}

// broken is the first server of the new revision in trouble.
func (o RolloutObservation) broken() (Server, bool) {
	for _, s := range o.Servers {
		if !s.Outdated && !s.Ready && !s.Terminating && s.Trouble != "" {
			return s, true
		}
	}
	return Server{}, false
}

// hung is the first server that hangs.
func (o RolloutObservation) hung() (Server, bool) {
	for _, s := range o.Servers {
		if s.Hung != "" && !s.Terminating {
			return s, true
		}
	}
	return Server{}, false
}

// behind is the first server whose own view says it is not current.
func (o RolloutObservation) behind() (Server, bool) {
	for _, s := range o.Servers {
		if s.Behind != "" && !s.Terminating {
			return s, true
		}
	}
	return Server{}, false
}

func behindMessage(s Server) string {
	return fmt.Sprintf("waiting for server %s to be current in its own Raft view: %s", s.Name, s.Behind)
}

// notAllUp names the first server that is missing, going or not ready.
func (o RolloutObservation) notAllUp() string {
	if len(o.Servers) < o.Want {
		return fmt.Sprintf("waiting for %d of %d servers to exist", o.Want-len(o.Servers), o.Want)
	}
	for _, s := range o.Servers {
		if s.Terminating || !s.Ready {
			return "waiting for server " + s.Name + " to be ready"
		}
	}
	return ""
}

// sortByOrdinalDescending: nats-10 before nats-9.
func sortByOrdinalDescending(servers []Server) {
	sort.Slice(servers, func(i, j int) bool {
		a, b := servers[i].Name, servers[j].Name
		return len(a) > len(b) || (len(a) == len(b) && a > b)
	})
}
