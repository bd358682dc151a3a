package natsmon

import "github.com/nats-io/nats-server/v2/server"

// Hosts reports whether the server's own view lists any stream replica on
// it: /jsz shows the streams a server hosts.
func Hosts(v *server.JSInfo) bool {
	if v == nil {
		return false
	}
	for _, acc := range v.AccountDetails {
		if len(acc.Streams) > 0 {
			return true
		}
	}
	return false
}

// WidestStream is the stream with the most replicas in any view, and its
// replica count.
func WidestStream(views map[string]*server.JSInfo) (name string, replicas int) {
	for _, v := range views {
		if v == nil {
			continue
		}
		for _, acc := range v.AccountDetails {
			for _, st := range acc.Streams {
				if st.Config != nil && st.Config.Replicas > replicas {
					name, replicas = st.Name, st.Config.Replicas
				}
			}
		}
	}
	return name, replicas
}

// MetaMembers are the meta group's members other than the leader, as the
// leader sees them (with Offline set for those it lost); ok is false when
// no view comes from the leader.
func MetaMembers(views map[string]*server.JSInfo) (members []*server.PeerInfo, ok bool) {
	v := views[MetaLeader(views)]
	if v == nil || v.Meta == nil {
		return nil, false
	}
	for _, p := range v.Meta.Replicas {
		if p != nil {
			members = append(members, p)
		}
	}
	return members, true
}
