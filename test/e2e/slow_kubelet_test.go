package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/test/e2ekit"
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
	e2ekit.Parallel(t, 96*time.Second) // it mostly waits for the kubelet
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	cluster.SetConfigRefreshDelay(ns, slowKubeletDelay)
	const first, second = "firstPassword1", "secondPassword2"
	f, secret := formWithUserPassword(t, ns, "slow", first)
	before := snapshot(t, f)
	history := recordStatus(t, f.Cluster)
	reloads := recordSystemRequests(t, systemConn(t, f, f.Pods), "$SYS.REQ.SERVER.*.RELOAD")

	changed := rotatePassword(t, secret, second)
	waitConfigLoaded(t, f, changed, slowKubeletDelay*2+time.Minute, func() error {
		if err := everyServer(t, f, second, true); err != nil {
			return err
		}
		return everyServer(t, f, first, false)
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
	byServer := reloads.bySubject() // $SYS.REQ.SERVER.<id>.RELOAD
	if len(byServer) != len(f.Pods) {
		t.Errorf("reloads were sent to %d servers, want every one of %d: %v", len(byServer), len(f.Pods), byServer)
	}
	for subject, times := range byServer {
		t.Logf("%s: %d reloads at %s", subject, len(times), offsets(changed, times))
		if len(times) < 2 || len(times) > allowed {
			t.Errorf("%s: %d reloads in %s, want 2 to %d", subject, len(times), pending.Round(time.Second), allowed)
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

// offsets are times as seconds after from, for the log.
func offsets(from time.Time, times []time.Time) string {
	parts := make([]string, len(times))
	for i, at := range times {
		parts[i] = at.Sub(from).Round(100 * time.Millisecond).String()
	}
	return strings.Join(parts, " ")
}
