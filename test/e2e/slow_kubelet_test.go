package e2e_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/plan"
)

// slowKubeletDelay is the least time this test's pods take to see a
// changed Secret: each sees it between this and twice this after the
// change, as late as a real kubelet at its one-minute sync.
const slowKubeletDelay = 40 * time.Second

// TestReloadWaitsOutASlowKubelet: with mounted files refreshed as late as a
// real kubelet refreshes them, a rotated password still reaches every
// server by reload, in the same processes; Ready and ConfigLoaded say the
// servers are behind for as long as they are; and the reloads sent while
// the kubelet lags are spaced further apart the longer it lags (the
// schedule plan.ReloadInterval gives), not sent at every pass.
func TestReloadWaitsOutASlowKubelet(t *testing.T) {
	t.Parallel() // it mostly waits for the kubelet
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	cluster.SetConfigRefreshDelay(ns, slowKubeletDelay)
	const first, second = "firstPassword1", "secondPassword2"
	f, secret := formWithUserPassword(t, ns, "slow", first)
	before := snapshot(t, f)
	history := recordStatus(t, f.cluster)
	reloads := recordReloads(t, systemConn(t, f, f.pods))

	changed := rotatePassword(t, secret, second)
	waitConfigLoaded(t, f, changed, slowKubeletDelay*2+time.Minute, func() error {
		if err := everyServer(f, second, true); err != nil {
			return err
		}
		return everyServer(f, first, false)
	})
	loaded := time.Now()
	pending := loaded.Sub(changed)
	t.Logf("every server loaded the new password %.1fs after the rotation", pending.Seconds())
	if pending < slowKubeletDelay {
		t.Fatalf("loaded %s after the rotation, before the slowest kubelet delay of %s: the slow kubelet was not in force", pending, slowKubeletDelay)
	}

	readyOnlyOnceLoaded(t, f, history, changed)

	// Spaced reloads: no more per server than the schedule allows over the
	// time it waited (plus one for a pass that raced a refresh), and more
	// than one (the first reload reread the old files).
	allowed := reloadsAllowed(pending) + 1
	byServer := reloads.byServer()
	if len(byServer) != len(f.pods) {
		t.Errorf("reloads were sent to %d servers, want every one of %d: %v", len(byServer), len(f.pods), byServer)
	}
	for id, times := range byServer {
		t.Logf("server %s…: %d reloads at %s", id[:8], len(times), offsets(changed, times))
		if len(times) < 2 || len(times) > allowed {
			t.Errorf("server %s: %d reloads in %s, want 2 to %d", id, len(times), pending.Round(time.Second), allowed)
		}
	}
	reloadedInPlace(t, f, before, snapshot(t, f))
}

// reloadsAllowed is how many reloads one server gets while a change waits
// for d: one at once, then one each time ReloadInterval has passed since
// the last.
func reloadsAllowed(d time.Duration) int {
	n := 0
	for at := time.Duration(0); at <= d; at += plan.ReloadInterval(at) {
		n++
	}
	return n
}

// reloadRequests records the reload requests sent in the system account,
// by server ID: the subject is $SYS.REQ.SERVER.<id>.RELOAD.
type reloadRequests struct {
	mu   sync.Mutex
	byID map[string][]time.Time
}

func recordReloads(t *testing.T, sys *nats.Conn) *reloadRequests {
	t.Helper()
	r := &reloadRequests{byID: map[string][]time.Time{}}
	sub, err := sys.Subscribe("$SYS.REQ.SERVER.*.RELOAD", func(m *nats.Msg) {
		id := strings.Split(m.Subject, ".")[3]
		r.mu.Lock()
		r.byID[id] = append(r.byID[id], time.Now())
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := sys.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *reloadRequests) byServer() map[string][]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]time.Time, len(r.byID))
	for id, times := range r.byID {
		out[id] = append([]time.Time(nil), times...)
	}
	return out
}

// offsets are times as seconds after from, for the log.
func offsets(from time.Time, times []time.Time) string {
	parts := make([]string, len(times))
	for i, at := range times {
		parts[i] = at.Sub(from).Round(100 * time.Millisecond).String()
	}
	return strings.Join(parts, " ")
}
