package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/internal/render"
)

// raftzGroup is the part of one /raftz entry a test reads: what the server
// itself knows of a Raft group it is a member of.
type raftzGroup struct {
	State      string `json:"state"`
	Leader     string `json:"leader"`
	Committed  uint64 `json:"committed"`
	Applied    uint64 `json:"applied"`
	CatchingUp bool   `json:"catching_up"`
}

// raftView is a server's /raftz for the system account (the meta group)
// and the application account (its streams and consumers), by group name.
type raftView map[string]raftzGroup

// readRaftView reads the server at ip's own Raft groups.
func readRaftView(ip string) (raftView, error) {
	view := raftView{}
	for _, query := range []string{"/raftz", "/raftz?acc=" + render.AppAccount} {
		var byAccount map[string]map[string]raftzGroup
		if err := monitor(ip, query, &byAccount); err != nil {
			return nil, err
		}
		for _, groups := range byAccount {
			for name, g := range groups {
				view[name] = g
			}
		}
	}
	return view, nil
}

// behind names the groups of leader (another server's view, taken
// earlier) this view has not applied up to the index leader had
// committed, or is still catching up on; "" when none. A group it does
// not have yet (a stream made while it was away) is behind too.
func (v raftView) behind(leader raftView) string {
	var out []string
	for name, lg := range leader {
		g, ok := v[name]
		switch {
		case !ok:
			out = append(out, name+" missing")
		case g.CatchingUp:
			out = append(out, name+" catching up")
		case g.Applied < lg.Committed:
			out = append(out, fmt.Sprintf("%s applied %d < %d", name, g.Applied, lg.Committed))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// ownHealth is a server's own verdict on whether it is current in every
// Raft group it is a member of: "" when its /healthz says so (200), or what
// it says instead.
func ownHealth(ip string) (string, error) {
	url := "http://" + net.JoinHostPort(ip, "8222") + "/healthz"
	resp, err := monitorClient.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode == http.StatusOK {
		return "", nil
	}
	var h struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &h) != nil || h.Error == "" {
		return fmt.Sprintf("%s: %s", resp.Status, body), nil
	}
	return h.Error, nil
}

// followerViews are one server's own views, taken as each pod of its
// namespace began terminating: the kubelet waits for the reads, so what
// they say is what held when the operator's deletion arrived.
type followerViews struct {
	mu    sync.Mutex
	byUID map[types.UID]followerView
}

type followerView struct {
	health string
	raft   raftView
	err    error
}

// recordFollowerViews reads server's /healthz and /raftz whenever a pod
// of f's namespace begins terminating, until the test ends.
func recordFollowerViews(t *testing.T, f *formed, server string) *followerViews {
	v := &followerViews{byUID: map[types.UID]followerView{}}
	remove := cluster.OnTerminating(func(pod *corev1.Pod) {
		if pod.Namespace != f.NS {
			return
		}
		ip := f.IP(server)
		var view followerView
		view.health, view.err = ownHealth(ip)
		if view.err == nil {
			view.raft, view.err = readRaftView(ip)
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		v.byUID[pod.UID] = view
	})
	t.Cleanup(remove)
	return v
}

// current says why the server was not current when d's termination
// began, nil when it was: its /healthz said so, and its /raftz had applied
// every group of due (its leader's view before it resumed) that far. A
// view never taken or not answered is an error: what cannot be seen is
// not taken for current.
func (v *followerViews) current(d deletion, due raftView) error {
	v.mu.Lock()
	view, ok := v.byUID[d.uid]
	v.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("%s was deleted, but the follower's own view was never taken as its termination began", d.name)
	case view.err != nil:
		return fmt.Errorf("as %s's termination began the follower did not answer: %v", d.name, view.err)
	case view.health != "":
		return fmt.Errorf("%s was deleted while the follower's own /healthz said: %s", d.name, view.health)
	}
	if behind := view.raft.behind(due); behind != "" {
		return fmt.Errorf("%s was deleted while the follower's own /raftz was behind its leader's commit before SIGCONT: %s", d.name, behind)
	}
	return nil
}

// backlogMessages and backlogSize make the backlog a resumed follower
// stores and applies: 16 MiB.
const (
	backlogMessages = 8192
	backlogSize     = 2 << 10
)

// writeBacklog publishes to subject, acknowledged by the servers that
// run, until backlogMessages are or until passes; it returns how many
// were.
func writeBacklog(t *testing.T, js natsjs.JetStream, subject string, until time.Time) int {
	t.Helper()
	payload := make([]byte, backlogSize)
	acked := 0
	for acked < backlogMessages && time.Now().Before(until) {
		var futures []natsjs.PubAckFuture
		for range 256 {
			fut, err := js.PublishAsync(subject, payload)
			if err != nil {
				break
			}
			futures = append(futures, fut)
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Until(until)):
		}
		for _, fut := range futures {
			select {
			case <-fut.Ok():
				acked++
			default:
			}
		}
	}
	if acked == 0 {
		t.Fatalf("no message of the backlog on %s was acknowledged", subject)
	}
	return acked
}

// caughtUp is when a resumed server first said, in its own /healthz and
// /raftz, that it is current; for the log (the assertion is on the views
// taken at each deletion).
type caughtUp struct {
	mu sync.Mutex
	at time.Time
}

func watchCaughtUp(t *testing.T, ip string, due raftView) *caughtUp {
	c := &caughtUp{}
	ctx := testCtx(t)
	go func() {
		for ctx.Err() == nil {
			health, err := ownHealth(ip)
			if err == nil && health == "" {
				if view, err := readRaftView(ip); err == nil && view.behind(due) == "" {
					c.mu.Lock()
					c.at = time.Now()
					c.mu.Unlock()
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return c
}

func (c *caughtUp) after(from time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%s after", c.at.Sub(from).Round(time.Millisecond))
}
