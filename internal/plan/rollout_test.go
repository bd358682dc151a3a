package plan

import (
	"slices"
	"strings"
	"testing"
)

func servers(names ...string) []Server {
	out := make([]Server, len(names))
	for i, n := range names {
		out[i] = Server{Name: n, Ready: true}
	}
	return out
}

func with(ss []Server, name string, edit func(*Server)) []Server {
	out := slices.Clone(ss)
	for i := range out {
		if out[i].Name == name {
			edit(&out[i])
		}
	}
	return out
}

func outdated(s *Server)    { s.Outdated = true }
func notReady(s *Server)    { s.Ready = false }
func terminating(s *Server) { s.Terminating = true }
func routeTLS(s *Server)    { s.Routes = "true" }
func hangs(s *Server)       { s.Hung = "does not answer its monitor port within 3s" }
func behind(s *Server)      { s.Behind = "stream UPGRADE is not current (stream catching up)" }

func allOutdated(ss []Server) []Server {
	out := slices.Clone(ss)
	for i := range out {
		out[i].Outdated = true
	}
	return out
}

func TestRollout(t *testing.T) {
	three := servers("nats-0", "nats-1", "nats-2")
	for _, tc := range []struct {
		name        string
		obs         RolloutObservation
		wantAction  Action
		wantServers []string
		wantWaiting string
	}{
		{"nothing outdated: done", RolloutObservation{Servers: three, Want: 3}, Wait, nil, ""},
		{"highest ordinal first", RolloutObservation{Servers: allOutdated(three), Want: 3, MetaLeader: "nats-0"}, Replace, []string{"nats-2"}, ""},
		{"nats-10 comes before nats-9", RolloutObservation{Servers: allOutdated(servers("nats-9", "nats-10")), Want: 2}, Replace, []string{"nats-10"}, ""},
		{"the meta leader goes last", RolloutObservation{Servers: allOutdated(three), Want: 3, MetaLeader: "nats-2"}, Replace, []string{"nats-1"}, ""},
		{"the meta leader when it is the last outdated one",
			RolloutObservation{Servers: with(three, "nats-2", outdated), Want: 3, MetaLeader: "nats-2"}, Replace, []string{"nats-2"}, ""},
		{"never while a Raft group lags",
			RolloutObservation{Servers: allOutdated(three), Want: 3, Unsettled: "stream ORDERS: replica nats-1 is not current"}, Wait, nil, "ORDERS"},
		{"never while a server is not ready",
			RolloutObservation{Servers: with(allOutdated(three), "nats-0", func(s *Server) { s.Outdated = false; s.Ready = false }), Want: 3}, Wait, nil, "nats-0"},
		// The leader's view is settled (Unsettled ""), the follower says it
		// is catching up: its word counts.
		{"never while a follower's own view says it is behind",
			RolloutObservation{Servers: with(allOutdated(three), "nats-0", behind), Want: 3, MetaLeader: "nats-1"}, Wait, nil,
			"waiting for server nats-0 to be current in its own Raft view: stream UPGRADE is not current (stream catching up)"},
		{"never while an updated server is behind",
			RolloutObservation{Servers: with(with(three, "nats-1", outdated), "nats-2", behind), Want: 3}, Wait, nil, "server nats-2 to be current"},
		{"a server that is going is not waited for as behind",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-0", behind), "nats-0", terminating), Want: 3}, Wait, nil, "nats-0 to be ready"},
		{"an outdated server that is not ready is replaced at once, behind or not",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-1", notReady), "nats-2", behind), Want: 3}, Replace, []string{"nats-1"}, ""},
		{"no route TLS change while a server is behind",
			RolloutObservation{Servers: with(allOutdated(three), "nats-2", behind), Want: 3, Routes: "true"}, Wait, nil, "route TLS change: waiting for server nats-2 to be current"},
		{"never while a follower hangs",
			RolloutObservation{Servers: with(allOutdated(three), "nats-0", hangs), Want: 3, MetaLeader: "nats-1"}, Wait, nil, "server nats-0, which does not answer"},
		{"never while an updated server hangs",
			RolloutObservation{Servers: with(with(three, "nats-1", outdated), "nats-2", hangs), Want: 3}, Wait, nil, "nats-2"},
		{"not even an outdated server that is not ready, while another hangs",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-2", notReady), "nats-0", hangs), Want: 3}, Wait, nil, "nats-0"},
		{"not even a route TLS change, while a server hangs",
			RolloutObservation{Servers: with(allOutdated(three), "nats-1", hangs), Want: 3, Routes: "true"}, Wait, nil, "nats-1"},
		{"a hung server that is going holds nothing up",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-0", hangs), "nats-0", terminating), Want: 3}, Wait, nil, "nats-0 to be ready"},
		{"never while a server is going",
			RolloutObservation{Servers: with(allOutdated(three), "nats-1", terminating), Want: 3}, Wait, nil, "nats-1"},
		{"never while a server is missing", RolloutObservation{Servers: allOutdated(three[:2]), Want: 3}, Wait, nil, "1 of 3"},
		{"an outdated server that is not ready is replaced at once, settled or not",
			RolloutObservation{Servers: with(allOutdated(three), "nats-1", notReady), Want: 3, Unsettled: "server nats-1 did not answer"}, Replace, []string{"nats-1"}, ""},
		{"a broken new server halts the rollout",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-2", func(s *Server) { s.Outdated = false }), "nats-2", notReady), Want: 3}, Wait, nil, "nats-2"},
		{"a new server in trouble halts the rollout, naming it and why",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-2", func(s *Server) { s.Outdated = false }), "nats-2", func(s *Server) {
				s.Ready, s.Trouble = false, "ErrImagePull: no nats-server 2.99.0"
			}), Want: 3}, Wait, nil, "halted: server nats-2 of the new revision is not ready (ErrImagePull: no nats-server 2.99.0)"},
		{"halted, settled or not",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-2", func(s *Server) { s.Outdated = false }), "nats-2", func(s *Server) {
				s.Ready, s.Trouble = false, "Unschedulable: 0/1 nodes are available"
			}), Want: 3, Unsettled: "server nats-2 did not answer"}, Wait, nil, "halted: server nats-2"},
		{"reverted: the broken server, outdated now, is replaced at once",
			RolloutObservation{Servers: with(servers("nats-0", "nats-1", "nats-2"), "nats-2", func(s *Server) {
				s.Outdated, s.Ready, s.Trouble = true, false, "ImagePullBackOff: back-off pulling image"
			}), Want: 3, Unsettled: "server nats-2 did not answer", MetaLeader: "nats-0"}, Replace, []string{"nats-2"}, ""},
		{"a terminating server in trouble halts nothing: it is going",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-2", func(s *Server) { s.Outdated = false }), "nats-2", func(s *Server) {
				s.Ready, s.Terminating, s.Trouble = false, true, "CrashLoopBackOff"
			}), Want: 3}, Wait, nil, "waiting for server nats-2 to be ready"},
		{"route TLS on: all outdated at once once settled",
			RolloutObservation{Servers: allOutdated(three), Want: 3, Routes: "true"}, ReplaceAll, []string{"nats-0", "nats-1", "nats-2"}, ""},
		{"route TLS on: not while unsettled",
			RolloutObservation{Servers: allOutdated(three), Want: 3, Routes: "true", Unsettled: "the meta group has no leader"}, Wait, nil, "route TLS change"},
		{"route TLS off: all at once too",
			RolloutObservation{Servers: allOutdated(with(with(with(three, "nats-0", routeTLS), "nats-1", routeTLS), "nats-2", routeTLS)), Want: 3}, ReplaceAll, []string{"nats-0", "nats-1", "nats-2"}, ""},
		{"route TLS: a split cluster finishes at once, unsettled as it is",
			RolloutObservation{Servers: with(with(allOutdated(three), "nats-0", func(s *Server) { s.Outdated = false; s.Routes = "true" }), "nats-1", terminating),
				Want: 3, Routes: "true", Unsettled: "server nats-0 did not answer"}, ReplaceAll, []string{"nats-2"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Rollout(tc.obs)
			if got.Action != tc.wantAction || !slices.Equal(got.Servers, tc.wantServers) {
				t.Fatalf("Rollout = %+v, want action %d on %v", got, tc.wantAction, tc.wantServers)
			}
			if tc.wantWaiting == "" && got.Waiting != "" || !strings.Contains(got.Waiting, tc.wantWaiting) {
				t.Errorf("waiting = %q, want it to mention %q", got.Waiting, tc.wantWaiting)
			}
			if wantHalted := strings.HasPrefix(tc.wantWaiting, "halted"); got.Halted != wantHalted {
				t.Errorf("halted = %t, want %t", got.Halted, wantHalted)
			}
		})
	}
}
