package e2ekit

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubenats/kubenats/test/loopback"
)

// PodHistory is every change to a namespace's pods, as a watch delivers
// them (in order, milliseconds after the API server stored them), for
// assertions about what happened during a rollout: which pods were
// replaced, when, and how many servers were down at once. Unlike polling,
// it misses nothing between two reads.
type PodHistory struct {
	mu      sync.Mutex
	events  []podEvent
	stopped []stopInterval // servers the test froze (SIGSTOP), up to SIGCONT
}

type podEvent struct {
	at       time.Time
	name     string
	uid      types.UID
	deleting bool // a deletion timestamp is set, or the pod is gone
	gone     bool // the pod is gone
	ready    bool
}

type stopInterval struct {
	name        string
	from, until time.Time
}

// RecordPods watches ns's pods until the test ends. The watch begins with
// the pods that exist (as Added events).
func RecordPods(t *testing.T, ns string) *PodHistory {
	t.Helper()
	h := &PodHistory{}
	if err := Cluster.WatchNamespace(Ctx(t), ns, func(ev watch.Event, at time.Time) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return
		}
		e := podEvent{at: at, name: p.Name, uid: p.UID,
			deleting: ev.Type == watch.Deleted || p.DeletionTimestamp != nil, gone: ev.Type == watch.Deleted, ready: loopback.PodReady(p) && ev.Type != watch.Deleted}
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	}, &corev1.PodList{}); err != nil {
		t.Fatal(err)
	}
	return h
}

// Seen waits until the history holds a ready pod of each name: the watch
// has caught up with a formed cluster.
func (h *PodHistory) Seen(t *testing.T, names []string) {
	t.Helper()
	Eventually(t, Wait, func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, n := range names {
			if !slices.ContainsFunc(h.events, func(e podEvent) bool { return e.name == n && e.ready }) {
				return fmt.Errorf("no ready pod %s in the watch yet", n)
			}
		}
		return nil
	})
}

// Froze records that the test stopped a server's process from..until.
func (h *PodHistory) Froze(name string, from, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = append(h.stopped, stopInterval{name, from, until})
}

// UIDs are the distinct pods (by UID) that bore name, in order.
func (h *PodHistory) UIDs(name string) []types.UID {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []types.UID
	for _, e := range h.events {
		if e.name == name && !slices.Contains(out, e.uid) {
			out = append(out, e.uid)
		}
	}
	return out
}

// Deletion is the first moment a pod was seen going.
type Deletion struct {
	Name string
	UID  types.UID
	At   time.Time
}

// Deletions are the pods seen going, in order.
func (h *PodHistory) Deletions() []Deletion {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Deletion
	done := map[types.UID]bool{}
	for _, e := range h.events {
		if e.deleting && !done[e.uid] {
			done[e.uid] = true
			out = append(out, Deletion{e.name, e.uid, e.at})
		}
	}
	return out
}

// Touched are the names among names whose pod was deleted or replaced.
func (h *PodHistory) Touched(names ...string) []string {
	var out []string
	for _, n := range names {
		if len(h.UIDs(n)) != 1 || slices.ContainsFunc(h.Deletions(), func(d Deletion) bool { return d.Name == n }) {
			out = append(out, n)
		}
	}
	return out
}

// MostDown is the largest number of servers down at one moment, and when:
// a server is down from the moment its pod is seen not ready or going (or
// its process was frozen) until a pod of its name is ready again. A
// retired server (one a scale-down removes) counts until its pod is gone.
func (h *PodHistory) MostDown(retired ...string) (int, time.Time, []string) {
	return h.MostDownBetween(time.Time{}, time.Time{}, retired...)
}

// MostDownBetween is MostDown counted from a moment on and before another
// (zero: no end): servers down then count; a formation before, or a
// restart of every server after (by design), does not.
func (h *PodHistory) MostDownBetween(from, until time.Time, retired ...string) (int, time.Time, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	type change struct {
		at     time.Time
		name   string
		up     *bool // a pod event: ready and not going
		frozen *bool // a freeze begins or ends
		gone   bool  // a retired server's pod is gone
	}
	var changes []change
	for _, e := range h.events {
		up := e.ready && !e.deleting
		changes = append(changes, change{at: e.at, name: e.name, up: &up, gone: e.gone && slices.Contains(retired, e.name)})
	}
	yes, no := true, false
	for _, s := range h.stopped {
		changes = append(changes, change{at: s.from, name: s.name, frozen: &yes}, change{at: s.until, name: s.name, frozen: &no})
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].at.Before(changes[j].at) })
	up, frozen := map[string]bool{}, map[string]bool{}
	most, when, which := 0, time.Time{}, []string(nil)
	for _, c := range changes {
		switch {
		case c.gone:
			delete(up, c.name)
		case c.up != nil:
			up[c.name] = *c.up
		default:
			frozen[c.name] = *c.frozen
		}
		var down []string
		for name, u := range up {
			if !u || frozen[name] {
				down = append(down, name)
			}
		}
		if len(down) > most && !c.at.Before(from) && (until.IsZero() || c.at.Before(until)) {
			sort.Strings(down)
			most, when, which = len(down), c.at, down
		}
	}
	return most, when, which
}

// WentDown reports whether a pod of name was seen not ready or going
// between from and until.
func (h *PodHistory) WentDown(name string, from, until time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.events, func(e podEvent) bool {
		return e.name == name && !e.at.Before(from) && !e.at.After(until) && (!e.ready || e.deleting)
	})
}
