package plan

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/version"
)

// AnnotationAllowVersionChange on a NatsCluster names the one nats-server
// version it may move to whatever CheckVersionChange says: for what the
// user knows better (a release this operator does not know yet).
const AnnotationAllowVersionChange = "kubenats.io/allow-version-change"

// VersionChange is what a change of a NatsCluster's nats-server version is
// checked against before any server restarts.
type VersionChange struct {
	// To is the version the spec asks for.
	To string
	// Servers are the versions the servers run, by server: what each
	// reports, or what its pod was made for when it does not answer.
	Servers map[string]string
	// Streams are the streams and consumers the servers host (any server's
	// view; the same one seen twice is fine).
	Streams []StreamUse
	// Silent are the servers that gave no answer within the bound when
	// their streams were asked for; Unreadable those whose answer could
	// not be read (what they said, bounded).
	Silent, Unreadable []string
	// Allowed is the version the user allowed whatever the checks say
	// (the annotation kubenats.io/allow-version-change); it counts only
	// when it is To.
	Allowed string
}

// StreamUse is what a version change must know of one stream or consumer.
type StreamUse struct {
	Account, Stream string
	// Consumer is "" for the stream itself.
	Consumer string
	// RequiredLevel is the JetStream API level its configuration needs
	// ("_nats.req.level" in its metadata; 0 when absent).
	RequiredLevel int
	// DiscardNewSchedules: a stream with message schedules and
	// `discard: new`.
	DiscardNewSchedules bool
}

// VersionVerdict says whether a version change may roll, and why not.
type VersionVerdict struct {
	// Reasons are why the change is refused, one per rule broken, each a
	// sentence; empty when it may roll.
	Reasons []string
	// Overridden: the checks refused it and the user allowed it anyway.
	Overridden bool
	// WaitFor are silent servers: the change waits for them, as a
	// rollout waits for a hung server, before it is checked at all.
	WaitFor []string
}

// Refused reports whether the change must not roll.
func (v VersionVerdict) Refused() bool { return len(v.Reasons) > 0 && !v.Overridden }

// Waits reports whether the change waits for servers to answer.
func (v VersionVerdict) Waits() bool { return len(v.WaitFor) > 0 }

// CheckVersionChange decides whether the servers may move to o.To:
//
//   - To must be of a release line this operator knows (natsReleases);
//   - every server must run at least what To's line asks for first (its
//     stepping stone), which also refuses skipping a line;
//   - moving down, every stream and consumer must need no more than To's
//     JetStream API level: an older server loads it offline;
//   - no stream may have a configuration To's line refuses.
//
// A server whose version is not known is left out of the stepping-stone
// rule: its pod says what it was made for, and a crashing server must
// not keep the user from moving on. A silent server makes the change
// wait; one whose streams cannot be read refuses it (what it hosts is
// unknown), unless allowed.
func CheckVersionChange(o VersionChange) VersionVerdict {
	if len(o.Silent) > 0 {
		return VersionVerdict{WaitFor: o.Silent}
	}
	to, err := version.ParseSemantic(o.To)
	if err != nil {
		return verdict(o, []string{fmt.Sprintf("spec.version %q is not a version", o.To)})
	}
	target, known := releaseOf(to)
	if !known {
		return verdict(o, []string{fmt.Sprintf("this operator does not know nats-server %d.%d: what moving to it requires cannot be checked; upgrade the operator, or allow it with the annotation %s=%s",
			to.Major(), to.Minor(), AnnotationAllowVersionChange, o.To)})
	}
	var reasons []string
	if len(o.Unreadable) > 0 {
		reasons = append(reasons, fmt.Sprintf("the streams of %s could not be read, so the change cannot be checked; allow it with the annotation %s=%s",
			named(o.Unreadable), AnnotationAllowVersionChange, o.To))
	}
	if r := steppingStone(o.Servers, target); r != "" {
		reasons = append(reasons, r)
	}
	if r := levelTooLow(o.Streams, o.To, target); r != "" {
		reasons = append(reasons, r)
	}
	if r := refusedConfigs(o.Streams, o.To, target); r != "" {
		reasons = append(reasons, r)
	}
	return verdict(o, reasons)
}

func verdict(o VersionChange, reasons []string) VersionVerdict {
	return VersionVerdict{Reasons: reasons, Overridden: len(reasons) > 0 && o.Allowed != "" && o.Allowed == o.To}
}

// steppingStone names the servers that run below what target's line asks
// for first.
func steppingStone(servers map[string]string, target natsRelease) string {
	from := version.MustParseSemantic(target.from)
	var short []string
	for name, v := range servers {
		if running, err := version.ParseSemantic(v); err == nil && running.LessThan(from) {
			short = append(short, fmt.Sprintf("%s runs %s", name, v))
		}
	}
	if len(short) == 0 {
		return ""
	}
	sort.Strings(short)
	return fmt.Sprintf("nats-server %s needs every server on %s or later first: %s", target.line, target.from, named(short))
}

// levelTooLow names the streams and consumers that need a JetStream API
// level above what target supports.
func levelTooLow(streams []StreamUse, to string, target natsRelease) string {
	var over []string
	for _, s := range streams {
		if s.RequiredLevel > target.apiLevel {
			over = append(over, fmt.Sprintf("%s (level %d)", s.name(), s.RequiredLevel))
		}
	}
	if len(over) == 0 {
		return ""
	}
	return fmt.Sprintf("nats-server %s supports JetStream API level %d, and these need more (features it does not know, which cannot be turned off): %s", to, target.apiLevel, named(unique(over)))
}

// refusedConfigs names the streams whose configuration target refuses.
func refusedConfigs(streams []StreamUse, to string, target natsRelease) string {
	if !target.refusesDiscardNewSchedules {
		return ""
	}
	var refused []string
	for _, s := range streams {
		if s.Consumer == "" && s.DiscardNewSchedules {
			refused = append(refused, s.name())
		}
	}
	if len(refused) == 0 {
		return ""
	}
	return fmt.Sprintf("nats-server %s refuses streams with message schedules and discard new; change their discard policy first: %s", to, named(unique(refused)))
}

func (s StreamUse) name() string {
	n := "stream " + s.Stream
	if s.Consumer != "" {
		n = "consumer " + s.Consumer + " of stream " + s.Stream
	}
	if s.Account != "" {
		n += " in account " + s.Account
	}
	return n
}

// unique sorts what and drops repeats: a stream is listed by each server
// that hosts a replica.
func unique(what []string) []string {
	sort.Strings(what)
	out := what[:0]
	for i, w := range what {
		if i == 0 || w != what[i-1] {
			out = append(out, w)
		}
	}
	return out
}
