package v1alpha1

import (
	"slices"
	"strings"
)

// AdmitsNamespace reports whether JetStream resources of namespace ns may
// name the cluster from outside its own namespace: allowedNamespaces lists
// ns, or "*".
func (j JetStreamSpec) AdmitsNamespace(ns string) bool {
	return slices.Contains(j.AllowedNamespaces, ns) || slices.Contains(j.AllowedNamespaces, "*")
}

// LabelZone and LabelRegion are the node labels a server learns its place
// from: Kubernetes copies them onto the pod when it binds it to a node.
const (
	LabelZone   = "topology.kubernetes.io/zone"
	LabelRegion = "topology.kubernetes.io/region"
)

// ZoneTagPrefix starts the JetStream server tag that names a server's
// zone, and is the jetstream unique_tag when replicas are spread.
const ZoneTagPrefix = "zone:"

// CarriesZoneTags reports whether the servers carry the zone and region
// server tags the operator gives them: JetStream on, and spec.config not
// setting server_tags (a user's own list replaces the operator's).
func (s NatsClusterSpec) CarriesZoneTags() bool {
	if !s.JetStreamEnabled() {
		return false
	}
	for key := range s.Config {
		if strings.EqualFold(key, "server_tags") {
			return false
		}
	}
	return true
}

// SpreadsZones reports whether replicas may be kept in different zones:
// the zone tags are carried and spec.jetstream.zoneSpread is not Off.
// Whether they are depends on the zones too (plan.SpreadReplicasOverZones).
func (s NatsClusterSpec) SpreadsZones() bool {
	return s.CarriesZoneTags() && s.JetStream.ZoneSpread != ZoneSpreadOff
}
