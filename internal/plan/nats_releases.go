package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// natsRelease is what this operator knows of one nats-server release line
// (major.minor), from its release notes, upgrade guide and source.
type natsRelease struct {
	line string
	// apiLevel is the JetStream API level its servers support
	// (server.JSApiLevel). A stream or consumer records the level its
	// configuration needs in its metadata ("_nats.req.level"); a server
	// of a lower level loads it offline, as "unsupported".
	apiLevel int
	// from is the lowest version every server must run before any moves
	// to this line: the previous line, or a patch of it the upgrade guide
	// names.
	from string
	// refusesDiscardNewSchedules: streams with message schedules and
	// `discard: new`, which 2.12 accepted, are refused by this line
	// (nats-architecture-and-design#424; server.checkStreamCfg).
	refusesDiscardNewSchedules bool
}

// natsReleases are the release lines this operator knows, oldest first.
// A version of a line not listed is refused: what it requires is not
// known here. Levels are server.JSApiLevel of 2.11.0 (1), 2.12.0 (2),
// 2.14.10 (4) and 2.15.3 (5); what needs which is
// server/jetstream_versioning.go (TTL 1; counters, atomic batch,
// schedules and async persistence 2; fast batch and flow-control acks 4).
// 2.12.0 accepts schedules with discard new, 2.14.10 refuses them. Stepping stones: the 2.15 upgrade guide asks for
// 2.14.7 or later first (2.15 proposes delete ranges as one Raft entry,
// which only 2.14 applies; server/feature_flags.go).
var natsReleases = []natsRelease{
	{line: "2.10", apiLevel: 0, from: "2.9.0"},
	{line: "2.11", apiLevel: 1, from: "2.10.0"},
	{line: "2.12", apiLevel: 2, from: "2.11.0"},
	{line: "2.14", apiLevel: 4, from: "2.12.0", refusesDiscardNewSchedules: true},
	{line: "2.15", apiLevel: 5, from: "2.14.7", refusesDiscardNewSchedules: true},
}

// releaseOf is the known line of v, or false.
func releaseOf(v *version.Version) (natsRelease, bool) {
	line := fmt.Sprintf("%d.%d", v.Major(), v.Minor())
	for _, r := range natsReleases {
		if r.line == line {
			return r, true
		}
	}
	return natsRelease{}, false
}
