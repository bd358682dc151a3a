package natsmon

import (
	"fmt"
	"slices"
	"sort"
)

// Placement is where one stream's or consumer's Raft group is, as the
// servers that host it report it.
type Placement struct {
	// Name says which: "stream ORDERS" or "consumer W of stream ORDERS"
	// (with the account when it is not the only one).
	Name string
	// Replicas is the configured replica count (of a consumer: its own,
	// or else its stream's).
	Replicas int
	// Peers are the servers named as its leader or replicas in any view,
	// sorted.
	Peers []string
	// Moving: a view reports a desired peer set, so that a change of its
	// peers (an evacuation, a move, a change of replicas) is in flight.
	Moving bool
}

// Placements are every stream's and consumer's Raft group over all views,
// in a stable order. A server lists the groups it hosts, so a group is
// seen as often as it has replicas that answered; their reports are
// merged.
func Placements(views map[string]*JSInfo) []Placement {
	byName := map[string]*Placement{}
	accounts := map[string]bool{}
	for _, v := range views {
		if v != nil {
			for _, acc := range v.Accounts {
				accounts[acc.Name] = true
			}
		}
	}
	add := func(name string, replicas int, ci *Group, host string) {
		p := byName[name]
		if p == nil {
			p = &Placement{Name: name}
			byName[name] = p
		}
		p.Replicas = max(p.Replicas, replicas)
		peers := []string{host}
		if ci != nil {
			p.Moving = p.Moving || ci.Moving
			if ci.Leader != "" {
				peers = append(peers, ci.Leader)
			}
			for _, r := range ci.Replicas {
				if r.Name != "" {
					peers = append(peers, r.Name)
				}
			}
		}
		for _, s := range peers {
			if !slices.Contains(p.Peers, s) {
				p.Peers = append(p.Peers, s)
			}
		}
	}
	for host, v := range views {
		if v == nil {
			continue
		}
		for _, acc := range v.Accounts {
			prefix := ""
			if len(accounts) > 1 {
				prefix = "account " + acc.Name + " "
			}
			for _, st := range acc.Streams {
				replicas := max(st.Replicas, 1)
				add(prefix+"stream "+st.Name, replicas, st.Cluster, host)
				for _, c := range st.Consumers {
					cr := replicas
					if c.Replicas > 0 {
						cr = c.Replicas
					}
					add(fmt.Sprintf("%sconsumer %s of stream %s", prefix, c.Name, st.Name), cr, c.Cluster, host)
				}
			}
		}
	}
	out := make([]Placement, 0, len(byName))
	for _, p := range byName {
		sort.Strings(p.Peers)
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MetaMembers are the meta group's members other than the leader, as the
// leader sees them (with Offline set for those it lost); ok is false when
// no view comes from the leader.
func MetaMembers(views map[string]*JSInfo) (members []Peer, ok bool) {
	v := views[MetaLeader(views)]
	if v == nil || v.Meta == nil {
		return nil, false
	}
	return v.Meta.Replicas, true
}
