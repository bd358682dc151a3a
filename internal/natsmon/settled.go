package natsmon

import (
	"fmt"
	"sort"
	"time"
)

// Unsettled names the first thing that keeps a clustered JetStream from
// being settled, or returns "" when every Raft group (the meta group, every
// stream, every consumer) has a leader and all its replicas are online and
// current, in every server's view. views maps server name to its /jsz.
// A rollout waits while this is not "", however long: it never proceeds on
// a timeout.
func Unsettled(views map[string]*JSInfo) string {
	names := make([]string, 0, len(views))
	for name := range views {
		names = append(names, name)
	}
	sort.Strings(names) // the same cluster state gives the same message
	for _, name := range names {
		if msg := unsettledView(name, views[name]); msg != "" {
			return msg
		}
	}
	return ""
}

func unsettledView(server string, v *JSInfo) string {
	if v == nil {
		return fmt.Sprintf("server %s did not answer", server)
	}
	if v.Meta == nil || v.Meta.Leader == "" {
		return fmt.Sprintf("the JetStream meta group has no leader in the view of %s", server)
	}
	if v.Meta.Leader == server {
		if msg := lagging("the meta group", v.Meta.Replicas); msg != "" {
			return msg
		}
	}
	for _, acc := range v.Accounts {
		for _, st := range acc.Streams {
			if msg := unsettledGroup("stream "+Shown(st.Name), st.Cluster); msg != "" {
				return msg
			}
			for _, c := range st.Consumers {
				if msg := unsettledGroup(fmt.Sprintf("consumer %s of stream %s", Shown(c.Name), Shown(st.Name)), c.Cluster); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func unsettledGroup(what string, ci *Group) string {
	if ci == nil {
		return ""
	}
	if ci.Leader == "" {
		return what + " has no leader"
	}
	return lagging(what, ci.Replicas)
}

// Under steady publishing a healthy follower trails the commit index by the
// entries in flight: nats-server then reports it not current (lag > 0) at
// almost every instant. A follower heard from recently and within
// inFlight entries of the leader counts as current.
const (
	inFlight     = 100
	recentlySeen = 2 * time.Second
)

// lagging names a follower that is offline or behind. The leader lists its
// followers only.
func lagging(what string, replicas []Peer) string {
	for _, p := range replicas {
		switch {
		case p.Offline:
			return fmt.Sprintf("%s: replica %s is offline", what, Shown(p.Name))
		case p.Current:
		case p.Lag > inFlight || p.Active > recentlySeen:
			return fmt.Sprintf("%s: replica %s is not current (%d entries behind, last seen %s ago)",
				what, Shown(p.Name), p.Lag, p.Active.Round(time.Millisecond))
		}
	}
	return ""
}

// MetaLeader is the meta group's leader as the views agree on it, or "".
func MetaLeader(views map[string]*JSInfo) string {
	for _, v := range views {
		if v != nil && v.Meta != nil && v.Meta.Leader != "" {
			return v.Meta.Leader
		}
	}
	return ""
}
