package e2ekit

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// What every test that replaces servers under load asserts of the roll,
// whatever replaced them (a rollout, a takeover, a supercluster member's
// roll): never two servers of a cluster down at once, the meta leader
// replaced last (when it is among them), the publisher's longest stall
// bounded, and the meta group whole afterwards. A roll that replaced
// every server at once keeps the data (the stream's store is on the
// claims) and passes a check of the data alone.

// MaxRollStall bounds a publisher's longest wait for an acknowledgement
// over a roll. With one server down at a time an R3 stream keeps its
// quorum: a restarted server costs at most a change of stream leader
// (lame duck hands leadership over) plus the client's reconnect and one
// publish timeout (2 s). Two servers down at once stop the stream until
// one is back: a restart, a JetStream recovery and a Raft catch-up, which
// is more.
const MaxRollStall = 8 * time.Second

// monitorClient reads the servers' monitoring endpoints (port 8222).
var monitorClient = &http.Client{Timeout: 5 * time.Second}

// Monitor reads a server's monitoring endpoint path at ip into out.
func Monitor(ip, path string, out any) error {
	url := "http://" + net.JoinHostPort(ip, "8222") + path
	resp, err := monitorClient.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// MetaView is the part of /jsz's meta group a roll's checks read.
type MetaView struct {
	Meta *struct {
		Leader   string `json:"leader"`
		Size     int    `json:"cluster_size"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
		} `json:"replicas"`
	} `json:"meta_cluster"`
}

// MetaLeaders is the meta leader over time, as the servers report it.
type MetaLeaders struct {
	mu      sync.Mutex
	samples []leaderSample
}

type leaderSample struct {
	at     time.Time
	leader string
}

// WatchMetaLeader samples the meta leader every 100 ms until the test
// ends, from the first of the servers at addrs (asked at each sample: a
// replaced pod may have another address) that answers (a frozen server
// answers nothing until the client's timeout: it goes last).
func WatchMetaLeader(t *testing.T, addrs func() []string) *MetaLeaders {
	l := &MetaLeaders{}
	ctx := Ctx(t)
	go func() {
		for ctx.Err() == nil {
			for _, ip := range addrs() {
				var j MetaView
				at := time.Now()
				if err := Monitor(ip, "/jsz", &j); err == nil && j.Meta != nil && j.Meta.Leader != "" {
					l.mu.Lock()
					l.samples = append(l.samples, leaderSample{at, j.Meta.Leader})
					l.mu.Unlock()
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return l
}

// IPs are the addresses of f's pods now.
func (f *Formed) IPs(pods []string) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = f.IP(p)
	}
	return out
}

// Before is the last leader sampled before at.
func (l *MetaLeaders) Before(at time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	leader := ""
	for _, s := range l.samples {
		if s.at.Before(at) {
			leader = s.leader
		}
	}
	return leader
}

// Changes lists the leader changes since from, for the log.
func (l *MetaLeaders) Changes(from time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	last := ""
	for _, s := range l.samples {
		if s.leader != last {
			fmt.Fprintf(&b, " %+.3fs %s", s.at.Sub(from).Seconds(), s.leader)
			last = s.leader
		}
	}
	return b.String()
}

// Sampled says whether any leader was sampled before at.
func (l *MetaLeaders) Sampled(at time.Time) bool { return l.Before(at) != "" }

// CheckRollGate asserts what a gated roll of servers, from began until
// until (zero: to now), must have kept to, from the pods' history and the
// meta leader's record: each server replaced exactly once, never two down
// at once, the meta leader replaced only as the last server left to
// replace, and the publisher's longest stall in the roll under
// MaxRollStall. It returns the order of the replacements, for the log.
func CheckRollGate(t *testing.T, h *PodHistory, leaders *MetaLeaders, servers []string, began, until time.Time, stall, maxStall time.Duration) []string {
	t.Helper()
	var dels []Deletion
	for _, d := range h.Deletions() {
		if slices.Contains(servers, d.Name) && !d.At.Before(began) && (until.IsZero() || d.At.Before(until)) {
			dels = append(dels, d)
		}
	}
	order := make([]string, len(dels))
	for i, d := range dels {
		order[i] = d.Name
	}
	if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, slices.Sorted(slices.Values(servers))) {
		t.Fatalf("servers replaced %v, want each of %v once", order, servers)
	}
	if most, when, which := h.MostDownBetween(began, until); most > 1 {
		t.Fatalf("%d servers down at once (%v), %s after the roll began", most, which, when.Sub(began).Round(time.Millisecond))
	}
	for i, d := range dels {
		if !leaders.Sampled(d.At) {
			t.Fatalf("no meta leader was sampled before %s was replaced: the order cannot be judged", d.Name)
		}
		// A leader that moved to a server already replaced, or to
		// another member, leaves nothing to order.
		if leader := leaders.Before(d.At); d.Name == leader && i != len(dels)-1 {
			t.Fatalf("replacement %d of %d: %s while it led the meta group: the meta leader goes last (order %v; leader changes:%s)",
				i+1, len(dels), d.Name, order, leaders.Changes(began))
		}
	}
	if stall > maxStall {
		t.Fatalf("the publisher stalled for %s during the roll, want under %s", stall.Round(time.Millisecond), maxStall)
	}
	return order
}

// CheckMetaGroupWhole waits until the meta leader, in its own view, has a
// meta group of size servers with every follower online and current.
// servers maps each server's name (its pod's) to its address.
func CheckMetaGroupWhole(t *testing.T, servers map[string]string, size int) {
	t.Helper()
	Eventually(t, Wait, func() error {
		leader := ""
		for _, ip := range servers {
			var j MetaView
			if Monitor(ip, "/jsz", &j) == nil && j.Meta != nil && j.Meta.Leader != "" {
				leader = j.Meta.Leader
				break
			}
		}
		ip, ok := servers[leader]
		if !ok {
			return fmt.Errorf("meta leader %q, not one of %d servers read", leader, len(servers))
		}
		var j MetaView
		if err := Monitor(ip, "/jsz", &j); err != nil || j.Meta == nil {
			return fmt.Errorf("the meta leader %s's own view: %v", leader, err)
		}
		if j.Meta.Leader != leader {
			return fmt.Errorf("%s no longer leads the meta group (%s does)", leader, j.Meta.Leader)
		}
		if n := len(j.Meta.Replicas) + 1; j.Meta.Size != size || n != size {
			return fmt.Errorf("the meta leader %s sees a group of %d (cluster_size %d), want %d", leader, n, j.Meta.Size, size)
		}
		for _, r := range j.Meta.Replicas {
			if r.Offline || !r.Current {
				return fmt.Errorf("meta peer %s offline=%t current=%t", r.Name, r.Offline, r.Current)
			}
		}
		return nil
	})
}

// Servers maps f's pods to their addresses now, for CheckMetaGroupWhole.
func (f *Formed) Servers() map[string]string {
	out := map[string]string{}
	for _, p := range f.Pods {
		out[p] = f.IP(p)
	}
	return out
}
