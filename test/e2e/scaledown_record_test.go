package e2e_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// What a scale-down test records while it runs: the system account
// requests that move replicas, leadership and peers (as the servers
// receive them), and where every Raft group under test is over time.

// The JetStream API subjects a scale-down's steps are requests to.
const (
	evacuateSubject   = "$JS.API.SERVER.EVACUATE"
	stepDownSubject   = "$JS.API.META.LEADER.STEPDOWN"
	removePeerSubject = "$JS.API.SERVER.REMOVE"
)

// systemRequests records every evacuation, meta leader step-down and peer
// removal request sent in the system account, by whoever: a subscriber of
// the system account receives a copy of each, the one independent record
// of what the operator asked the servers for.
type systemRequests struct {
	mu   sync.Mutex
	seen []systemRequest
	// notify, when set, is told of each request as it arrives.
	notify chan<- systemRequest
}

type systemRequest struct {
	at      time.Time
	subject string
	peer    string // the server named, "" for a step-down
}

func recordSystemRequests(t *testing.T, sys *nats.Conn) *systemRequests {
	t.Helper()
	r := &systemRequests{}
	for _, subject := range []string{evacuateSubject, stepDownSubject, removePeerSubject} {
		sub, err := sys.Subscribe(subject, func(m *nats.Msg) {
			var body struct {
				Peer string `json:"peer"`
			}
			_ = json.Unmarshal(m.Data, &body)
			req := systemRequest{at: time.Now(), subject: m.Subject, peer: body.Peer}
			r.mu.Lock()
			r.seen = append(r.seen, req)
			notify := r.notify
			r.mu.Unlock()
			if notify != nil {
				notify <- req
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	// The subscriptions reach every server before anything is asked.
	if err := sys.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

// of are the requests to subject naming peer ("" for any), in order.
func (r *systemRequests) of(subject, peer string) []systemRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []systemRequest
	for _, q := range r.seen {
		if q.subject == subject && (peer == "" || q.peer == peer) {
			out = append(out, q)
		}
	}
	return out
}

func (r *systemRequests) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, q := range r.seen {
		fmt.Fprintf(&b, "\n  %s %s %s", q.at.Format("15:04:05.000"), q.subject, q.peer)
	}
	return b.String()
}

// raftGroup names a stream, or a consumer of one, whose placement is
// sampled.
type raftGroup struct {
	stream, consumer string
}

func (g raftGroup) String() string {
	if g.consumer == "" {
		return "stream " + g.stream
	}
	return "consumer " + g.consumer + " of stream " + g.stream
}

func (g raftGroup) infoSubject() string {
	if g.consumer == "" {
		return "$JS.API.STREAM.INFO." + g.stream
	}
	return "$JS.API.CONSUMER.INFO." + g.stream + "." + g.consumer
}

// peersOf are the servers a stream or consumer info names as its leader
// and replicas, and whether any is offline.
func peersOf(nc *nats.Conn, g raftGroup) (peers []string, offline []string, err error) {
	m, err := nc.Request(g.infoSubject(), nil, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	var info struct {
		Error   *struct{ Description string } `json:"error"`
		Cluster *struct {
			Leader   string `json:"leader"`
			Replicas []struct {
				Name    string `json:"name"`
				Offline bool   `json:"offline"`
				Current bool   `json:"current"`
			} `json:"replicas"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(m.Data, &info); err != nil || info.Error != nil || info.Cluster == nil || info.Cluster.Leader == "" {
		return nil, nil, fmt.Errorf("%s: %s", g, m.Data)
	}
	peers = []string{info.Cluster.Leader}
	for _, r := range info.Cluster.Replicas {
		peers = append(peers, r.Name)
		if r.Offline || !r.Current {
			offline = append(offline, r.Name)
		}
	}
	sort.Strings(peers)
	return peers, offline, nil
}

// placements is where the groups under test were, sampled over time.
type placements struct {
	mu      sync.Mutex
	samples []placementSample
}

// placementSample is one complete look: every group answered.
type placementSample struct {
	at    time.Time
	peers map[string][]string // group -> its servers
}

// samplePlacements looks at every group every 200 ms until the test ends,
// through nc (a connection to servers that stay).
func samplePlacements(t *testing.T, nc *nats.Conn, groups []raftGroup) *placements {
	p := &placements{}
	ctx := testCtx(t)
	go func() {
		for ctx.Err() == nil {
			at := time.Now()
			s := placementSample{at: at, peers: map[string][]string{}}
			for _, g := range groups {
				peers, _, err := peersOf(nc, g)
				if err != nil {
					break
				}
				s.peers[g.String()] = peers
			}
			if len(s.peers) == len(groups) {
				p.mu.Lock()
				p.samples = append(p.samples, s)
				p.mu.Unlock()
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return p
}

// lastBefore is the last complete sample taken before at.
func (p *placements) lastBefore(at time.Time) (placementSample, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var last placementSample
	found := false
	for _, s := range p.samples {
		if s.at.Before(at) {
			last, found = s, true
		}
	}
	return last, found
}

// stillHolding bounds a look taken after a server's delete call that still
// shows what the server held when it was deleted: it keeps serving its
// replicas through its lame duck grace period (render.LameDuckGracePeriod,
// 10 s), and nothing moves a replica off it on its own meanwhile.
const stillHolding = 5 * time.Second

// atDeletion is the look that tells what a server deleted at `at` held:
// the first complete sample taken in the stillHolding window after the
// delete call (the server still holds then what it held at the call, and
// a move the operator had not waited for still shows it as a peer) or,
// when the groups could not all be read in that window, the last complete
// one after `since` (its evacuation) and before the call. A sample before
// the call can be seconds old (a JetStream API timeout during a meta
// election), so it comes second.
func (p *placements) atDeletion(since, at time.Time) (placementSample, bool) {
	p.mu.Lock()
	for _, s := range p.samples {
		if !s.at.Before(at) && s.at.Before(at.Add(stillHolding)) {
			p.mu.Unlock()
			return s, true
		}
	}
	p.mu.Unlock()
	if last, ok := p.lastBefore(at); ok && last.at.After(since) {
		return last, true
	}
	return placementSample{}, false
}

// on are the groups of a sample that have a replica on server.
func (s placementSample) on(server string) []string {
	var out []string
	for g, peers := range s.peers {
		if slices.Contains(peers, server) {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}
