package plan

import (
	"fmt"
	"slices"
	"sort"
)

// Member is one server of the cluster as a scale-down sees it: a pod of
// the StatefulSet, a peer of the JetStream meta group, or both.
type Member struct {
	Name    string
	Ordinal int
	// Pod: its pod exists (terminating or not).
	Pod bool
	// Peer: the meta leader lists it in the meta group.
	Peer bool
	// Offline: the meta leader has lost it.
	Offline bool
}

// Group is one stream's or consumer's Raft group as the servers report it.
type Group struct {
	// Name says which, for messages: "stream ORDERS", "consumer W of stream ORDERS".
	Name string
	// Replicas is the configured replica count.
	Replicas int
	// Peers are the servers that hold a replica now (leader included).
	Peers []string
	// Moving: a change of its peers is in flight (the servers report a
	// desired peer set), as an evacuation starts one.
	Moving bool
}

// ScaleDownObservation is what one scale-down decision is made from.
type ScaleDownObservation struct {
	// Live is the StatefulSet's replica count, Want the spec's.
	Live, Want int
	// SystemAccount: the operator can make the system account's requests
	// (evacuate, step down, remove a peer). AuthMode names the mode for
	// the message when it cannot.
	SystemAccount bool
	AuthMode      string
	// Servers are the pods and the meta group's peers of this cluster.
	Servers []Member
	// MetaKnown: the meta leader's view was read, so Peer and Offline
	// are its word. MetaLeader is that leader.
	MetaKnown  bool
	MetaLeader string
	// Unsettled names what keeps the Raft groups from being settled.
	Unsettled string
	Groups    []Group
	// Hung names the servers that do not answer (empty when all do): a
	// frozen server's replicas and votes cannot be moved or counted.
	Hung string
}

// ScaleDown decides the next step of going from Live servers to Want:
//   - one server at a time, the highest ordinal; the next one is not
//     touched until the previous one's pod is gone and its peer removed
//     from the meta group, so that never two servers are going at once and
//     no replica is placed on a server about to go;
//   - a server goes only once it holds nothing: first its stream and
//     consumer replicas are moved off (one evacuation, never repeated while
//     its moves are in flight, and not at all once it holds nothing), then
//     its meta leadership is handed to a server that stays;
//   - nothing moves while a Raft group is unsettled or a move is in flight;
//   - what cannot be done safely (a stream wider than the new size, no
//     system account) is refused, never half done.
//
// When Live is not above Want, only the peers of removed servers are left
// to remove, and the servers that are to be to join the meta group.
func ScaleDown(o ScaleDownObservation) Step {
	shrinking := o.Want < o.Live
	if !o.SystemAccount {
		if !shrinking {
			return Step{}
		}
		return Step{Refused: true, Waiting: fmt.Sprintf("scaling a JetStream cluster in auth mode %s from %d to %d is refused: "+
			"moving replicas off a server and removing its JetStream peer need the system account, which this mode cannot have",
			o.AuthMode, o.Live, o.Want)}
	}
	if shrinking && o.Hung != "" {
		return Step{Waiting: o.Hung + "; no server is removed while one hangs"}
	}
	if shrinking {
		if g, ok := o.widest(); ok && g.Replicas > o.Want {
			return Step{Refused: true, Waiting: fmt.Sprintf("%s has %d replicas: %d servers cannot hold them; lower its replicas first",
				g.Name, g.Replicas, o.Want)}
		}
	}
	if !o.MetaKnown {
		return Step{Waiting: "the JetStream meta group has no leader to ask"}
	}
	if s := o.leaving(); s != nil {
		return s.removal()
	}
	if !shrinking {
		return o.joined()
	}
	for i := range o.Live {
		if m, ok := o.member(i); !ok || !m.Pod {
			return Step{Waiting: fmt.Sprintf("waiting for the server of ordinal %d to exist", i)}
		}
	}
	if o.Unsettled != "" {
		return Step{Waiting: "waiting for JetStream to settle: " + o.Unsettled}
	}
	if g, ok := o.moving(); ok {
		return Step{Waiting: "waiting for the move of " + g.Name + " to finish"}
	}
	victim, _ := o.member(o.Live - 1)
	if g, ok := o.hostedBy(victim.Name); ok {
		return Step{Action: Evacuate, Servers: []string{victim.Name}, Waiting: "moving " + g.Name + " and any other replica off " + victim.Name}
	}
	if o.MetaLeader == victim.Name {
		to, _ := o.member(0)
		return Step{Action: StepDown, Servers: []string{victim.Name}, To: to.Name,
			Waiting: "waiting for " + victim.Name + " to hand over meta leadership"}
	}
	return Step{Action: RemoveServer, Servers: []string{victim.Name}, Waiting: "removing server " + victim.Name}
}

// joined waits, once the cluster is at its size or growing, for every
// server to exist and be a member of the meta group: a server removed
// from it is let back in only 5 minutes after its removal (nats-server's
// peer-remove timeout), so a scale-out onto the ordinals a scale-down just
// removed has servers that run, pass their probes and serve no JetStream.
func (o ScaleDownObservation) joined() Step {
	for i := range max(o.Live, o.Want) {
		m, ok := o.member(i)
		switch {
		case !ok || !m.Pod:
			return Step{Waiting: fmt.Sprintf("waiting for the server of ordinal %d to exist", i)}
		case !m.Peer:
			return Step{Waiting: "waiting for server " + m.Name + " to join the JetStream meta group " +
				"(a server removed from it is let back in 5 minutes after its removal)"}
		}
	}
	return Step{}
}

// leaving is the lowest server the StatefulSet no longer has that is not
// gone yet: its pod still stops, or its peer is still in the meta group.
func (o ScaleDownObservation) leaving() *Member {
	var beyond []Member
	for _, m := range o.Servers {
		if m.Ordinal >= o.Live && (m.Pod || m.Peer) {
			beyond = append(beyond, m)
		}
	}
	if len(beyond) == 0 {
		return nil
	}
	sort.Slice(beyond, func(i, j int) bool { return beyond[i].Ordinal < beyond[j].Ordinal })
	return &beyond[0]
}

// removal is the next step for a server on its way out.
func (m *Member) removal() Step {
	switch {
	case m.Pod:
		return Step{Waiting: "waiting for server " + m.Name + " to stop"}
	case !m.Offline:
		return Step{Waiting: "waiting for the meta leader to see server " + m.Name + " offline"}
	}
	return Step{Action: RemovePeer, Servers: []string{m.Name}, Waiting: "removing JetStream peer " + m.Name + " from the meta group"}
}

func (o ScaleDownObservation) member(ordinal int) (Member, bool) {
	for _, m := range o.Servers {
		if m.Ordinal == ordinal {
			return m, true
		}
	}
	return Member{}, false
}

// widest is the group with the most replicas (the first of them).
func (o ScaleDownObservation) widest() (Group, bool) {
	var w Group
	found := false
	for _, g := range o.Groups {
		if !found || g.Replicas > w.Replicas {
			w, found = g, true
		}
	}
	return w, found
}

func (o ScaleDownObservation) moving() (Group, bool) {
	for _, g := range o.Groups {
		if g.Moving {
			return g, true
		}
	}
	return Group{}, false
}

func (o ScaleDownObservation) hostedBy(server string) (Group, bool) {
	for _, g := range o.Groups {
		if slices.Contains(g.Peers, server) {
			return g, true
		}
	}
	return Group{}, false
}
