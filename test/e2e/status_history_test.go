package e2e_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// statusHistory is every Ready condition a NatsCluster's status showed, as
// a watch delivers them: what a user watching the resource saw, and when.
type statusHistory struct {
	mu    sync.Mutex
	seen  []readySeen
	total int
}

type readySeen struct {
	at              time.Time
	status, message string
}

// recordStatus watches c until the test ends.
func recordStatus(t *testing.T, c *v1alpha1.NatsCluster) *statusHistory {
	t.Helper()
	h := &statusHistory{}
	if err := cluster.WatchNamespace(testCtx(t), c.Namespace, func(ev watch.Event, at time.Time) {
		nc, ok := ev.Object.(*v1alpha1.NatsCluster)
		if !ok || nc.Name != c.Name {
			return
		}
		ready := meta.FindStatusCondition(nc.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil {
			return
		}
		h.mu.Lock()
		h.seen = append(h.seen, readySeen{at: at, status: string(ready.Status), message: ready.Message})
		h.mu.Unlock()
	}, &v1alpha1.NatsClusterList{}); err != nil {
		t.Fatal(err)
	}
	return h
}

// said is the first Ready message seen in [from, until) that contains
// every one of parts, "" for none.
func (h *statusHistory) said(from, until time.Time, parts ...string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
next:
	for _, s := range h.seen {
		if s.at.Before(from) || !s.at.Before(until) {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(s.message, p) {
				continue next
			}
		}
		return s.message
	}
	return ""
}

// firstFalse is when Ready was first seen False at or after from; until
// then a status written before a change may still be arriving.
func (h *statusHistory) firstFalse(from time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.seen {
		if !s.at.Before(from) && s.status == "False" {
			return s.at
		}
	}
	return from
}

// trueBetween is the first time in [from, until) Ready was seen True.
func (h *statusHistory) trueBetween(from, until time.Time) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.seen {
		if !s.at.Before(from) && s.at.Before(until) && s.status == "True" {
			return s.at, true
		}
	}
	return time.Time{}, false
}

// between lists the Ready conditions seen in [from, until), for a failure.
func (h *statusHistory) between(from, until time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, s := range h.seen {
		if !s.at.Before(from) && s.at.Before(until) {
			fmt.Fprintf(&b, "  +%s %s %q\n", s.at.Sub(from).Round(time.Millisecond), s.status, s.message)
		}
	}
	return b.String()
}
