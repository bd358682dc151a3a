package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// MinZonesToSpread is the fewest zones in which replicas are kept apart:
// with two, an R3 stream would have nowhere to put its third replica and
// every R3 create would be refused.
const MinZonesToSpread = 3

// SpreadReplicasOverZones says whether the servers run with unique_tag on
// the zone tag, so that the replicas of a stream land in different zones.
// allowed is the spec's say (zone tags carried, zoneSpread not Off);
// nodeZones are the zones of the nodes the servers may be scheduled to,
// serverZones those the servers run in now. Both count: the nodes decide
// before the first server is scheduled (no restart right after creation),
// the servers keep the setting while a zone's nodes are briefly gone (no
// restart for a node pool scaled to zero and back). A node or server
// without a zone counts as the zone "", as its tag "zone:" does.
func SpreadReplicasOverZones(allowed bool, nodeZones, serverZones []string) bool {
	if !allowed {
		return false
	}
	return len(distinct(nodeZones)) >= MinZonesToSpread || len(distinct(serverZones)) >= MinZonesToSpread
}

// ZoneServers are the servers of one zone, sorted.
type ZoneServers struct {
	Zone    string
	Servers []string
}

// ServersByZone groups the servers (name to zone) by zone, zones sorted.
func ServersByZone(servers map[string]string) []ZoneServers {
	byZone := map[string][]string{}
	for server, zone := range servers {
		byZone[zone] = append(byZone[zone], server)
	}
	out := make([]ZoneServers, 0, len(byZone))
	for zone, names := range byZone {
		sort.Strings(names)
		out = append(out, ZoneServers{Zone: zone, Servers: names})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Zone < out[j].Zone })
	return out
}

// ZoneRedundancy is whether the cluster survives the loss of a zone.
type ZoneRedundancy struct {
	// Known is false when fewer than two zones exist: there is nothing
	// to spread over, and nothing to say.
	Known bool
	// Redundant: every zone's loss leaves a quorum of the servers.
	Redundant bool
	// Message says which zone holds too many, or that any one can go.
	Message string
}

// CheckZoneRedundancy judges the servers' spread (name to zone) over the
// zones that exist (zones: every zone a node or a server is in). The
// JetStream meta group has every server as a peer and needs a majority:
// losing a zone with k of n servers keeps it when n-k >= n/2+1. A
// quorum in one zone is the classic case; half of the servers is enough
// to stop it (two of four).
func CheckZoneRedundancy(servers map[string]string, zones []string) ZoneRedundancy {
	all := distinct(append(slices.Clone(zones), values(servers)...))
	if len(all) < 2 || len(servers) == 0 {
		return ZoneRedundancy{}
	}
	n := len(servers)
	quorum := n/2 + 1
	var worst []string
	for _, z := range ServersByZone(servers) {
		if n-len(z.Servers) < quorum {
			worst = append(worst, fmt.Sprintf("zone %q holds %s", z.Zone, strings.Join(z.Servers, ", ")))
		}
	}
	if len(worst) > 0 {
		return ZoneRedundancy{Known: true, Message: fmt.Sprintf(
			"losing one zone stops JetStream: %s, which leaves fewer than the %d of %d servers its meta group needs",
			strings.Join(worst, "; "), quorum, n)}
	}
	return ZoneRedundancy{Known: true, Redundant: true, Message: fmt.Sprintf(
		"%d servers over %d zones: losing any one zone leaves a quorum of %d", n, len(distinct(values(servers))), quorum)}
}

func distinct(in []string) []string {
	out := slices.Clone(in)
	sort.Strings(out)
	return slices.Compact(out)
}

func values(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
