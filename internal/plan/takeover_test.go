package plan

import "testing"

// TestTakeoverPhase: each phase ends only when every server runs the
// current template in its route mode, ready, with nothing under way.
// Variants it catches: routes closed as soon as the chart's StatefulSet is
// released (the first case), while one of the chart's servers still runs
// (the second), or while the rollout still waits for JetStream to settle
// (the third); complete before the servers closed their routes (the
// fifth).
func TestTakeoverPhase(t *testing.T) {
	current := func(mode string) []Server {
		return []Server{{Name: "nats-0", Ready: true, Routes: mode}, {Name: "nats-1", Ready: true, Routes: mode}, {Name: "nats-2", Ready: true, Routes: mode}}
	}
	chartLeft := current("open")
	chartLeft[1].Outdated = true
	for _, tc := range []struct {
		name string
		o    TakeoverObservation
		want string
	}{
		{"released: servers are replaced first", TakeoverObservation{Adopted: true, Servers: current("open"), Want: 3, Routes: "open"}, TakeoverReplacingServers},
		{"not released yet", TakeoverObservation{Servers: current("open"), Want: 3, Routes: "open"}, ""},
		{"one of the chart's servers left", TakeoverObservation{Phase: TakeoverReplacingServers, Adopted: true, Servers: chartLeft, Want: 3, Routes: "open"}, TakeoverReplacingServers},
		{"the rollout still waits", TakeoverObservation{Phase: TakeoverReplacingServers, Adopted: true, Servers: current("open"), Want: 3, Routes: "open", Blocked: true}, TakeoverReplacingServers},
		{"a server missing", TakeoverObservation{Phase: TakeoverReplacingServers, Adopted: true, Servers: current("open")[:2], Want: 3, Routes: "open"}, TakeoverReplacingServers},
		{"every server kubenats': close the routes", TakeoverObservation{Phase: TakeoverReplacingServers, Adopted: true, Servers: current("open"), Want: 3, Routes: "open"}, TakeoverClosingRoutes},
		{"routes not closed yet", TakeoverObservation{Phase: TakeoverClosingRoutes, Adopted: true, Servers: current("open"), Want: 3, Routes: "true"}, TakeoverClosingRoutes},
		{"routes closed", TakeoverObservation{Phase: TakeoverClosingRoutes, Adopted: true, Servers: current("true"), Want: 3, Routes: "true"}, TakeoverComplete},
		{"complete stays complete", TakeoverObservation{Phase: TakeoverComplete, Adopted: true, Servers: chartLeft, Want: 3, Routes: "true"}, TakeoverComplete},
	} {
		if got := TakeoverPhase(tc.o); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
