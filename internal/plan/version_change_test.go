package plan

import (
	"strings"
	"testing"
)

// TestCheckVersionChange: each rule refuses what it names and lets the
// rest roll. Careless checks it catches: one that reads only the spec's
// old version instead of what each server runs (the mixed cluster with
// one server left on 2.14.5 would roll), one that checks levels only on
// upgrades or only streams (the consumer at level 4 would roll to 2.12),
// one that lets an unknown line through, and an override that covers any
// version (the override for 2.16.0 would let 2.17.0 roll).
func TestCheckVersionChange(t *testing.T) {
	onAll := func(v string) map[string]string { return map[string]string{"nats-0": v, "nats-1": v, "nats-2": v} }
	cases := []struct {
		name   string
		change VersionChange
		// want are substrings of the reasons, in order; none: it rolls.
		want       []string
		overridden bool
	}{
		{"patch within a line", VersionChange{To: "2.15.4", Servers: onAll("2.15.3")}, nil, false},
		{"2.14.10 to 2.15", VersionChange{To: "2.15.3", Servers: onAll("2.14.10")}, nil, false},
		{"2.14.5 to 2.15", VersionChange{To: "2.15.3", Servers: onAll("2.14.5")},
			[]string{"needs every server on 2.14.7 or later first: nats-0 runs 2.14.5, nats-1 runs 2.14.5, nats-2 runs 2.14.5"}, false},
		{"one server left behind", VersionChange{To: "2.15.3", Servers: map[string]string{"nats-0": "2.15.3", "nats-1": "2.14.5", "nats-2": "2.14.10"}},
			[]string{"nats-1 runs 2.14.5"}, false},
		{"skipping a line", VersionChange{To: "2.15.3", Servers: onAll("2.12.4")}, []string{"2.14.7 or later first"}, false},
		{"unknown server versions are left out", VersionChange{To: "2.15.3", Servers: map[string]string{"nats-0": "", "nats-1": "2.14.10"}}, nil, false},
		{"unknown line", VersionChange{To: "2.16.0", Servers: onAll("2.15.3")}, []string{"does not know nats-server 2.16"}, false},
		{"unknown line allowed", VersionChange{To: "2.16.0", Servers: onAll("2.15.3"), Allowed: "2.16.0"}, []string{"does not know"}, true},
		{"an override names one version", VersionChange{To: "2.17.0", Servers: onAll("2.15.3"), Allowed: "2.16.0"}, []string{"does not know"}, false},
		{"not a version", VersionChange{To: "latest"}, []string{"is not a version"}, false},
		{"down to 2.14 with fast batch", VersionChange{To: "2.14.10", Servers: onAll("2.15.3"),
			Streams: []StreamUse{{Account: "A", Stream: "ORDERS", RequiredLevel: 4}}}, nil, false},
		{"down to 2.12 with fast batch", VersionChange{To: "2.12.4", Servers: onAll("2.15.3"),
			Streams: []StreamUse{{Account: "A", Stream: "ORDERS", RequiredLevel: 4}, {Account: "A", Stream: "ORDERS", RequiredLevel: 4}, {Account: "A", Stream: "LOGS", RequiredLevel: 2}}},
			[]string{"supports JetStream API level 2, and these need more (features it does not know, which cannot be turned off): stream ORDERS in account A (level 4)"}, false},
		{"a consumer's level counts", VersionChange{To: "2.12.4", Servers: onAll("2.14.10"),
			Streams: []StreamUse{{Account: "A", Stream: "ORDERS", Consumer: "flow", RequiredLevel: 4}}},
			[]string{"consumer flow of stream ORDERS in account A (level 4)"}, false},
		{"TTL on 2.10", VersionChange{To: "2.10.22", Servers: onAll("2.11.1"),
			Streams: []StreamUse{{Stream: "S", RequiredLevel: 1}}}, []string{"level 0"}, false},
		{"schedules with discard new up to 2.14", VersionChange{To: "2.14.10", Servers: onAll("2.12.4"),
			Streams: []StreamUse{{Account: "A", Stream: "TIMERS", DiscardNewSchedules: true}}},
			[]string{"refuses streams with message schedules and discard new; change their discard policy first: stream TIMERS in account A"}, false},
		{"a server's streams unreadable", VersionChange{To: "2.15.4", Servers: onAll("2.15.3"), Unreadable: []string{"nats-1 (lists more than 4096 streams)"}},
			[]string{"the streams of nats-1 (lists more than 4096 streams) could not be read"}, false},
		{"unreadable, allowed", VersionChange{To: "2.15.4", Servers: onAll("2.15.3"), Unreadable: []string{"nats-1 (x)"}, Allowed: "2.15.4"},
			[]string{"could not be read"}, true},
		{"schedules with discard new on 2.12", VersionChange{To: "2.12.5", Servers: onAll("2.12.4"),
			Streams: []StreamUse{{Stream: "TIMERS", DiscardNewSchedules: true}}}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckVersionChange(tc.change)
			if len(got.Reasons) != len(tc.want) {
				t.Fatalf("reasons %q, want %d containing %q", got.Reasons, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got.Reasons[i], w) {
					t.Errorf("reason %d %q does not say %q", i, got.Reasons[i], w)
				}
			}
			if got.Overridden != tc.overridden || got.Refused() != (len(tc.want) > 0 && !tc.overridden) {
				t.Errorf("overridden %v refused %v", got.Overridden, got.Refused())
			}
		})
	}
}

// TestSilentServerMakesTheChangeWait: a server that did not answer makes
// the change wait, refused by nothing and allowed by nothing, whatever
// else is known. Careless checks it catches: one that refuses (the user
// would be told to override what only needs patience) and one that lets
// the change roll on what the other servers said (the silent one may host
// the only stream the target cannot load).
func TestSilentServerMakesTheChangeWait(t *testing.T) {
	got := CheckVersionChange(VersionChange{To: "2.16.0", Servers: map[string]string{"nats-0": "2.15.3"}, Silent: []string{"nats-2"}, Allowed: "2.16.0"})
	if !got.Waits() || got.WaitFor[0] != "nats-2" || got.Refused() || got.Overridden {
		t.Fatalf("verdict %+v, want a wait for nats-2 alone", got)
	}
}

// TestCheckVersionChangeNamesFewStreams: a cluster with thousands of
// streams gets a reason of bounded length.
func TestCheckVersionChangeNamesFewStreams(t *testing.T) {
	var streams []StreamUse
	for i := range 1000 {
		streams = append(streams, StreamUse{Stream: "S" + strings.Repeat("x", i%7) + string(rune('a'+i%26)), RequiredLevel: 4})
	}
	got := CheckVersionChange(VersionChange{To: "2.12.4", Streams: streams})
	if len(got.Reasons) != 1 || len(got.Reasons[0]) > 400 || !strings.Contains(got.Reasons[0], "more") {
		t.Fatalf("reasons %q", got.Reasons)
	}
}
