package e2e_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// restarter restarts the operator each time steps reports more steps
// carried out than it saw before, until stopped: the operator is killed
// right after each step it takes.
type restarter struct {
	mu       sync.Mutex
	restarts []time.Time
	err      error
	stop     chan struct{}
	done     chan struct{}
}

func restartAfterEachStep(steps func() int, restart func() error) *restarter {
	r := &restarter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		seen := steps()
		for {
			select {
			case <-r.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			n := steps()
			if n == seen {
				continue
			}
			seen = n
			err := restart()
			r.mu.Lock()
			r.restarts = append(r.restarts, time.Now())
			if err != nil && r.err == nil {
				r.err = err
			}
			r.mu.Unlock()
		}
	}()
	return r
}

// halt stops restarting; the operator that runs then stays. It returns
// how many restarts there were, and the first error.
func (r *restarter) halt() (int, error) {
	select {
	case <-r.done:
	default:
		close(r.stop)
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.restarts), r.err
}

// TestOperatorDiesAtEachStepOfAScaleDown: the scene of
// TestScaleDownMovesReplicasAndLeadershipFirst, with the operator killed
// and started anew right after each step it takes (each request it sends
// the servers, each pod deletion). It resumes from what it observes: the
// same story holds (each server evacuated exactly once, holding nothing
// when it goes, never two down at once, their peers removed), and the
// scale-down completes with every acknowledged message read back.
func TestOperatorDiesAtEachStepOfAScaleDown(t *testing.T) {
	sc := setUpScaleDown(t)
	steps := func() int {
		return len(sc.requests.of(evacuateSubject, "")) + len(sc.requests.of(stepDownSubject, "")) +
			len(sc.requests.of(removePeerSubject, "")) + len(sc.pods.deletions())
	}
	r := restartAfterEachStep(steps, runOperatorProcess(t).restart)
	defer r.halt()
	began := time.Now()
	setReplicas(t, sc.f.Cluster, 3)
	readyWith(t, sc.f.Cluster, 3)
	n, err := r.halt()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the operator was restarted %d times during the scale-down", n)
	// The story first: an operator that skipped a step is told by what it
	// did instead (a server deleted while it held something).
	sc.finished(t, began)
	// Evacuation, step-down, deletion and peer removal of the first
	// server, evacuation, deletion and peer removal of the second.
	if n < 7 {
		t.Fatalf("the operator was restarted %d times, want once after each of the 7 steps at least", n)
	}
}

// TestOperatorDiesAtEachStepOfARollout upgrades 3 servers under
// publishing with the operator killed and started anew right after each
// server it replaces. It resumes from what it observes: each server is
// replaced exactly once, never two are down at once, the meta leader goes
// last, the cluster is Ready on the new version, and every acknowledged
// message is stored. The meta and stream leaders are moved to the middle
// ordinal first, so that an operator that forgets, after a restart, which
// server leads and falls back to a fixed order (ascending or descending)
// replaces the leader second and fails.
func TestOperatorDiesAtEachStepOfARollout(t *testing.T) {
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) { s.Version = olderVersion })
	h := recordPods(t, f.NS)
	h.seen(t, f.Pods)
	pub, js, stream := startPublishing(t, f)
	defer pub.Halt()
	leaderAt := f.Pods[1]
	moveLeaders(t, f, systemConn(t, f, f.Pods), js.Conn(), leaderAt)
	leaders := watchMetaLeader(t, f, f.Pods)
	eventually(t, wait, func() error {
		if n := pub.Count(); n < 100 {
			return fmt.Errorf("%d messages acknowledged before the upgrade", n)
		}
		return nil
	})
	r := restartAfterEachStep(func() int { return len(h.deletions()) }, runOperatorProcess(t).restart)
	defer r.halt()
	began := time.Now()
	edit(t, f.Cluster, func(s *v1alpha1.NatsClusterSpec) { s.Version = v1alpha1.DefaultVersion })
	readyOnVersion(t, f, v1alpha1.DefaultVersion)
	n, err := r.halt()
	if err != nil {
		t.Fatal(err)
	}
	pub.Halt()

	dels := h.deletions()
	if n < len(f.Pods) || len(dels) != len(f.Pods) {
		t.Fatalf("deletions %v with %d operator restarts, want one per server, each followed by a restart", dels, n)
	}
	order := make([]string, len(dels))
	for i, d := range dels {
		order[i] = d.name
	}
	if leader := leaders.before(dels[0].at); leader != leaderAt {
		t.Fatalf("the meta leader was %q at the first replacement, not %s: the test cannot tell the leader-last order from a fixed one (order %v)", leader, leaderAt, order)
	}
	for i, d := range dels {
		if slices.Contains(order[:i], d.name) {
			t.Fatalf("%s replaced twice (order %v)", d.name, order)
		}
		leader := leaders.before(d.at)
		if last := i == len(dels)-1; (d.name == leader) != last {
			t.Fatalf("replacement %d of %d: %s, meta leader %q: the meta leader goes last, and only it (order %v)", i+1, len(dels), d.name, leader, order)
		}
	}
	if most, when, which := h.mostDown(); most > 1 {
		t.Fatalf("%d servers down at once (%v), %s after the upgrade began", most, which, when.Sub(began).Round(time.Millisecond))
	}
	acked, stall := pub.Result()
	stored := storedCount(t, js, stream, acked)
	checkEveryIDStored(t, js, acked, stored)
	t.Logf("replaced %v with %d operator restarts in %s; %d messages acknowledged, none lost; longest publish stall %s",
		order, n, time.Since(began).Round(time.Millisecond), acked, stall.Round(time.Millisecond))
}
