package e2e_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// What a scale-down test records while it runs: the system account
// requests that move replicas, leadership and peers (as the servers
// receive them); and how the other servers see a Raft group's peers.

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
	reply   string // where the answer goes
}

// scaleDownSubjects are the requests a scale-down's steps are.
var scaleDownSubjects = []string{evacuateSubject, stepDownSubject, removePeerSubject}

// recordSystemRequests records the requests sent to subjects (wildcards
// allowed) in the system account until the test ends.
func recordSystemRequests(t *testing.T, sys *nats.Conn, subjects ...string) *systemRequests {
	t.Helper()
	r := &systemRequests{}
	for _, subject := range subjects {
		sub, err := sys.Subscribe(subject, func(m *nats.Msg) {
			var body struct {
				Peer string `json:"peer"`
			}
			_ = json.Unmarshal(m.Data, &body)
			req := systemRequest{at: time.Now(), subject: m.Subject, peer: body.Peer, reply: m.Reply}
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

// bySubject are the times of the requests seen, by subject.
func (r *systemRequests) bySubject() map[string][]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]time.Time{}
	for _, q := range r.seen {
		out[q.subject] = append(out[q.subject], q.at)
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

// systemAnswers records the answers of the servers to requests in the
// system account (by the inbox they go to): with systemRequests, what
// each request achieved, as the servers said.
type systemAnswers struct {
	mu sync.Mutex
	// errCode of each answer by its subject: 0 for a success.
	errCode map[string]int
}

// recordSystemAnswers records every answer sent to an inbox in the
// system account until the test ends.
func recordSystemAnswers(t *testing.T, sys *nats.Conn) *systemAnswers {
	t.Helper()
	a := &systemAnswers{errCode: map[string]int{}}
	sub, err := sys.Subscribe(nats.InboxPrefix+">", func(m *nats.Msg) {
		var body struct {
			Error *struct {
				Code int `json:"err_code"`
			} `json:"error"`
		}
		code := 0
		if err := json.Unmarshal(m.Data, &body); err != nil {
			code = -1
		} else if body.Error != nil {
			code = body.Error.Code
		}
		a.mu.Lock()
		a.errCode[m.Subject] = code
		a.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := sys.Flush(); err != nil {
		t.Fatal(err)
	}
	return a
}

// of is the error code of the answer to a request, and whether one came.
func (a *systemAnswers) of(q systemRequest) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	code, ok := a.errCode[q.reply]
	return code, ok
}
