package natscluster

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/plan"
)

// observeScaleDown fills what a scale-down decides from: c's pods, the
// meta group as its leader sees it, and every Raft group's placement,
// from one look at the servers (views).
func observeScaleDown(obs *plan.ScaleDownObservation, c *v1alpha1.NatsCluster, pods []corev1.Pod, views map[string]*natsmon.JSInfo) {
	byName := map[string]*plan.Member{}
	member := func(name string) *plan.Member {
		ordinal, ok := c.PodOrdinal(name)
		if !ok {
			return nil // not one of c's: never touched
		}
		if byName[name] == nil {
			byName[name] = &plan.Member{Name: name, Ordinal: ordinal}
		}
		return byName[name]
	}
	for i := range pods {
		if m := member(pods[i].Name); m != nil {
			m.Pod = true
		}
	}
	obs.MetaLeader = natsmon.MetaLeader(views)
	if peers, ok := natsmon.MetaMembers(views); ok {
		obs.MetaKnown = true
		if m := member(obs.MetaLeader); m != nil {
			m.Peer = true
		}
		for _, p := range peers {
			if m := member(p.Name); m != nil {
				m.Peer, m.Offline = true, p.Offline
			}
		}
	}
	obs.Servers = obs.Servers[:0]
	for _, m := range byName {
		obs.Servers = append(obs.Servers, *m)
	}
	obs.Unsettled = natsmon.Unsettled(views)
	obs.Groups = obs.Groups[:0]
	for _, p := range natsmon.Placements(views) {
		obs.Groups = append(obs.Groups, plan.Group{Name: p.Name, Replicas: p.Replicas, Peers: p.Peers, Moving: p.Moving})
	}
}
