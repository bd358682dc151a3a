package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// cluster is a settled cluster of n servers, each a pod and an online meta
// peer, nats-0 leading the meta group, the StatefulSet at n, the spec at want.
func cluster(n, want int, edits ...func(*ScaleDownObservation)) ScaleDownObservation {
	o := ScaleDownObservation{Live: n, Want: want, SystemAccount: true, MetaKnown: true, MetaLeader: "nats-0"}
	for i := range n {
		o.Servers = append(o.Servers, Member{Name: fmt.Sprintf("nats-%d", i), Ordinal: i, Pod: true, Peer: true})
	}
	for _, e := range edits {
		e(&o)
	}
	return o
}

func stream(name string, peers ...string) func(*ScaleDownObservation) {
	return func(o *ScaleDownObservation) {
		o.Groups = append(o.Groups, Group{Name: "stream " + name, Replicas: len(peers), Peers: peers})
	}
}

func consumer(name string, peers ...string) func(*ScaleDownObservation) {
	return func(o *ScaleDownObservation) {
		o.Groups = append(o.Groups, Group{Name: "consumer " + name, Replicas: len(peers), Peers: peers})
	}
}

// moving marks the last group added as being moved.
func moving(o *ScaleDownObservation) { o.Groups[len(o.Groups)-1].Moving = true }

func metaLeader(name string) func(*ScaleDownObservation) {
	return func(o *ScaleDownObservation) { o.MetaLeader = name }
}

func statefulSetAt(n int) func(*ScaleDownObservation) {
	return func(o *ScaleDownObservation) { o.Live = n }
}

func server(name string, edit func(*Member)) func(*ScaleDownObservation) {
	return func(o *ScaleDownObservation) {
		for i := range o.Servers {
			if o.Servers[i].Name == name {
				edit(&o.Servers[i])
			}
		}
	}
}

func podGone(m *Member)     { m.Pod = false }
func peerGone(m *Member)    { m.Peer = false }
func offline(m *Member)     { m.Offline = true }
func goneOffline(m *Member) { m.Pod, m.Offline = false, true }

func TestScaleDown(t *testing.T) {
	for _, tc := range []struct {
		name        string
		obs         ScaleDownObservation
		wantAction  Action
		wantServers []string
		wantWaiting string
		wantRefused bool
	}{
		{"not shrinking and nothing left behind: done", cluster(3, 3), Wait, nil, "", false},
		{"nothing to do while the removed server's pod is gone and its peer too", cluster(4, 3, server("nats-3", podGone), server("nats-3", peerGone), statefulSetAt(3)),
			Wait, nil, "", false},
		{"an empty highest server that does not lead goes", cluster(5, 3, stream("A", "nats-0", "nats-1", "nats-2")),
			RemoveServer, []string{"nats-4"}, "removing server nats-4", false},
		{"the highest goes first, never a lower one", cluster(5, 3), RemoveServer, []string{"nats-4"}, "", false},
		{"nats-10 is higher than nats-9", ScaleDownObservation{Live: 11, Want: 9, SystemAccount: true, MetaKnown: true, MetaLeader: "nats-0",
			Servers: members(11)}, RemoveServer, []string{"nats-10"}, "", false},

		// A server that still holds a replica is evacuated, not removed.
		{"an R3 replica on the server: evacuate it", cluster(5, 3, stream("ORDERS", "nats-0", "nats-2", "nats-4")),
			Evacuate, []string{"nats-4"}, "stream ORDERS", false},
		{"an R1 stream on the server: evacuate it", cluster(5, 3, stream("LOG", "nats-4")),
			Evacuate, []string{"nats-4"}, "stream LOG", false},
		{"a consumer left behind after its stream moved: evacuate again", cluster(5, 3,
			stream("ORDERS", "nats-0", "nats-1", "nats-2"), consumer("W of stream ORDERS", "nats-1", "nats-4")),
			Evacuate, []string{"nats-4"}, "consumer W", false},
		{"a replica on another server that stays is no reason to evacuate", cluster(5, 3, stream("A", "nats-3")),
			RemoveServer, []string{"nats-4"}, "", false},

		// An evacuation in flight is waited for, never repeated.
		{"its replicas are moving: wait, do not evacuate again", cluster(5, 3, stream("ORDERS", "nats-0", "nats-2", "nats-4"), moving),
			Wait, nil, "move of stream ORDERS", false},
		{"a move elsewhere in flight: wait", cluster(5, 3, stream("ORDERS", "nats-4"), stream("OTHER", "nats-1"), moving),
			Wait, nil, "move of stream OTHER", false},
		{"a move in flight towards the server: it is not removed", cluster(5, 3, stream("ORDERS", "nats-1"), moving),
			Wait, nil, "move of stream ORDERS", false},
		{"evacuated, leading the meta group: step down to a server that stays", cluster(5, 3, stream("ORDERS", "nats-0", "nats-1", "nats-2"), metaLeader("nats-4")),
			StepDown, []string{"nats-4"}, "meta leadership", false},

		// Never a server while the meta leader is on it.
		{"the meta leader holds replicas: evacuate first", cluster(5, 3, stream("ORDERS", "nats-4"), metaLeader("nats-4")),
			Evacuate, []string{"nats-4"}, "", false},
		{"the meta leader elsewhere: remove", cluster(5, 3, metaLeader("nats-3")), RemoveServer, []string{"nats-4"}, "", false},

		// One at a time: nothing happens to the next server until the
		// previous one is gone, pod and peer.
		{"the removed server still stops: wait", cluster(5, 3, statefulSetAt(4)), Wait, nil, "waiting for server nats-4 to stop", false},
		{"the removed server stopped, not yet offline: wait", cluster(5, 3, statefulSetAt(4), server("nats-4", podGone)),
			Wait, nil, "see server nats-4 offline", false},
		{"the removed server is offline: remove its peer", cluster(5, 3, statefulSetAt(4), server("nats-4", goneOffline)),
			RemovePeer, []string{"nats-4"}, "", false},
		{"a stopping server is waited for, however settled the rest", cluster(5, 3, statefulSetAt(4), server("nats-4", offline)),
			Wait, nil, "nats-4 to stop", false},
		{"a pod gone, its peer gone: the next server", cluster(5, 3, statefulSetAt(4), server("nats-4", podGone), server("nats-4", peerGone)),
			RemoveServer, []string{"nats-3"}, "", false},
		{"the last peer to remove after the StatefulSet reached the size", cluster(5, 3, statefulSetAt(3), server("nats-4", podGone), server("nats-4", peerGone), server("nats-3", goneOffline)),
			RemovePeer, []string{"nats-3"}, "", false},
		{"peers of two gone servers: one at a time, the lower first", cluster(5, 3, statefulSetAt(3), server("nats-4", goneOffline), server("nats-3", goneOffline)),
			RemovePeer, []string{"nats-3"}, "", false},
		{"every peer removed at the new size: done", cluster(5, 3, statefulSetAt(3), server("nats-4", podGone), server("nats-4", peerGone), server("nats-3", podGone), server("nats-3", peerGone)),
			Wait, nil, "", false},

		// Growing: Ready waits for every server to be a meta peer.
		{"grown, a new server not in the meta group yet: wait for it", cluster(5, 5, server("nats-3", peerGone)),
			Wait, nil, "nats-3 to join the JetStream meta group", false},
		{"growing, a new server not created yet: wait for it", cluster(3, 5), Wait, nil, "ordinal 3 to exist", false},
		{"grown, every server a meta peer: done", cluster(5, 5), Wait, nil, "", false},

		// Not while anything is unsettled or missing.
		{"never while a server hangs, even an empty highest one", cluster(5, 3, func(o *ScaleDownObservation) { o.Hung = "server nats-1 does not answer" }),
			Wait, nil, "no server is removed while one hangs", false},
		{"a hung server does not hold a finished scale-down", cluster(3, 3, func(o *ScaleDownObservation) { o.Hung = "server nats-1 does not answer" }),
			Wait, nil, "", false},
		{"never while a Raft group lags", cluster(5, 3, func(o *ScaleDownObservation) { o.Unsettled = "stream ORDERS: replica nats-1 is not current" }),
			Wait, nil, "ORDERS", false},
		{"never without the meta leader's view", cluster(5, 3, func(o *ScaleDownObservation) { o.MetaKnown = false }),
			Wait, nil, "no leader", false},
		{"never while a staying server is missing", cluster(5, 3, server("nats-1", podGone)), Wait, nil, "ordinal 1", false},

		// Refused, never half done.
		{"a stream wider than the new size", cluster(5, 3, stream("WIDE", "nats-0", "nats-1", "nats-2", "nats-3", "nats-4")),
			Wait, nil, "stream WIDE has 5 replicas", true},
		{"no system account", cluster(5, 3, func(o *ScaleDownObservation) { o.SystemAccount, o.AuthMode = false, "token" }),
			Wait, nil, "auth mode token", true},
		{"no system account, not shrinking: nothing to do", cluster(3, 3, func(o *ScaleDownObservation) { o.SystemAccount = false }),
			Wait, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ScaleDown(tc.obs)
			if got.Action != tc.wantAction || !slices.Equal(got.Servers, tc.wantServers) {
				t.Fatalf("ScaleDown = %+v, want action %d on %v", got, tc.wantAction, tc.wantServers)
			}
			if tc.wantAction == Wait && tc.wantWaiting == "" && got.Waiting != "" || !strings.Contains(got.Waiting, tc.wantWaiting) {
				t.Errorf("waiting = %q, want it to mention %q", got.Waiting, tc.wantWaiting)
			}
			if got.Refused != tc.wantRefused {
				t.Errorf("refused = %t, want %t", got.Refused, tc.wantRefused)
			}
		})
	}
}

// TestScaleDownStepsDownToAServerThatStays: leadership handed to a server
// that goes next would have to move again.
func TestScaleDownStepsDownToAServerThatStays(t *testing.T) {
	got := ScaleDown(cluster(5, 3, metaLeader("nats-4")))
	if got.Action != StepDown || got.To == "" || got.To == "nats-3" || got.To == "nats-4" {
		t.Fatalf("ScaleDown = %+v, want a step-down preferring nats-0, nats-1 or nats-2", got)
	}
}

// TestScaleDownWalk carries every step out on a model of the cluster, as
// the servers would, from 5 to 3 servers with replicas and the meta leader
// on both servers that go, and checks the story: each server evacuated
// once, its leadership handed over, then removed; never two at once.
func TestScaleDownWalk(t *testing.T) {
	o := cluster(5, 3, stream("R3", "nats-2", "nats-3", "nats-4"), stream("R1", "nats-3"),
		consumer("C of stream R3", "nats-3", "nats-4"), metaLeader("nats-4"))
	var story []string
	for range 40 {
		s := ScaleDown(o)
		if s.Action == Wait {
			if s.Waiting == "" {
				break
			}
			t.Fatalf("stuck waiting: %s (story %v)", s.Waiting, story)
		}
		story = append(story, fmt.Sprintf("%d %s", s.Action, s.Servers[0]))
		name := s.Servers[0]
		switch s.Action {
		case Evacuate:
			for i := range o.Groups {
				o.Groups[i].Peers = slices.DeleteFunc(o.Groups[i].Peers, func(p string) bool { return p == name })
				if len(o.Groups[i].Peers) < o.Groups[i].Replicas {
					o.Groups[i].Peers = append(o.Groups[i].Peers, "nats-0")
				}
			}
		case StepDown:
			o.MetaLeader = s.To
		case RemoveServer:
			o.Live--
			server(name, goneOffline)(&o)
		case RemovePeer:
			server(name, peerGone)(&o)
		}
	}
	want := []string{
		fmt.Sprintf("%d nats-4", Evacuate), fmt.Sprintf("%d nats-4", StepDown), fmt.Sprintf("%d nats-4", RemoveServer), fmt.Sprintf("%d nats-4", RemovePeer),
		fmt.Sprintf("%d nats-3", Evacuate), fmt.Sprintf("%d nats-3", RemoveServer), fmt.Sprintf("%d nats-3", RemovePeer),
	}
	if !slices.Equal(story, want) {
		t.Fatalf("story %v, want %v", story, want)
	}
}

func members(n int) []Member {
	out := make([]Member, n)
	for i := range out {
		out[i] = Member{Name: fmt.Sprintf("nats-%d", i), Ordinal: i, Pod: true, Peer: true}
	}
	return out
}
