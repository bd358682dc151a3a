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
	natsjs "github.com/nats-io/nats.go/jetstream"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// TestLeadersAreBalancedOnRequest: six R3 streams whose leaders the test
// piles on nats-0 (its own step-down requests, as NATS' elections after
// a restart often leave them), then a request for a balance (the
// annotation kubectl kubenats balance sets). The operator spreads them,
// two a server, each stream's leader moving once at most (the test
// watches every stream's leader the whole time), and the status counts
// two per server (the metric is the status' count: status_metrics_test).
//
// Careless operators it catches: one that never balances (run as a
// temporary change of balanceLeaders returning before any move: six on
// nats-0 for the whole wait), one that moves a group to a follower
// without asking for a preferred one (a plain step-down: NATS elects any
// follower, and moves pile up or repeat: the spread or the one-move bound
// breaks).
func TestLeadersAreBalancedOnRequest(t *testing.T) {
	e2ekit.Parallel(t, 45*time.Second)
	f := formCluster(t)
	c := f.Cluster
	// The balance that answers to the new cluster's servers is done (it
	// counted no leader) before the test makes any: from here on only the
	// request moves a leader.
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if got := leaderCounts(c.Status.Leaders); got != "nats-0=0 nats-1=0 nats-2=0" {
			return fmt.Errorf("status.leaders %q, want none led yet", got)
		}
		return nil
	})
	nc := appConn(t, f, "leaders", f.Pods...)
	js := appJetStream(t, nc)
	var names []string
	for i := range 6 {
		name := fmt.Sprintf("L%d", i)
		names = append(names, name)
		eventually(t, wait, func() error {
			_, err := js.CreateStream(testCtx(t), natsjs.StreamConfig{Name: name, Subjects: []string{"leaders." + name}, Replicas: 3})
			return err
		})
	}
	pile := f.Pods[0]
	for _, name := range names {
		eventually(t, wait, func() error {
			leader, current, err := streamLeader(t, js, name)
			if err != nil || leader == pile {
				return err
			}
			if current < 2 {
				return fmt.Errorf("stream %s has %d current followers", name, current)
			}
			return stepDown(nc, name, pile)
		})
	}
	w := watchLeaders(t, js, names)
	defer w.stop()
	if counts := w.counts(); counts[pile] != len(names) {
		t.Fatalf("leaders by server %v after the pile, want all on %s", counts, pile)
	}
	// Unasked, nothing moves.
	poll.Holds(t, 3*time.Second, func() error {
		if counts := w.counts(); counts[pile] != len(names) {
			return fmt.Errorf("leaders moved before the request: %v", counts)
		}
		return nil
	})
	asked := time.Now()
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[v1alpha1.AnnotationBalanceLeaders] = time.Now().UTC().Format(time.RFC3339)
		return cluster.Client.Update(testCtx(t), c)
	})
	eventually(t, 2*time.Minute, func() error {
		counts := w.counts()
		for _, p := range f.Pods {
			if counts[p] != 2 {
				return fmt.Errorf("leaders by server %v, want two each", counts)
			}
		}
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if got := leaderCounts(c.Status.Leaders); got != "nats-0=2 nats-1=2 nats-2=2" {
			return fmt.Errorf("status.leaders %s", got)
		}
		return nil
	})
	t.Logf("balanced %s after the request", time.Since(asked).Round(time.Millisecond))
	for name, moves := range w.stop() {
		if moves > 1 {
			t.Errorf("stream %s's leader moved %d times during the balance, want at most once", name, moves)
		}
	}
}

// stepDown asks stream's leader to hand over to preferred.
func stepDown(nc *nats.Conn, stream, preferred string) error {
	body, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": preferred}})
	msg, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, body, 5*time.Second)
	if err != nil {
		return err
	}
	if strings.Contains(string(msg.Data), `"error"`) {
		return fmt.Errorf("step-down of %s: %s", stream, msg.Data)
	}
	return fmt.Errorf("asked %s's leader to step down to %s", stream, preferred) // look again
}

// streamLeader is stream's leader and how many followers are current.
func streamLeader(t *testing.T, js natsjs.JetStream, stream string) (string, int, error) {
	s, err := js.Stream(testCtx(t), stream)
	if err != nil {
		return "", 0, err
	}
	info := s.CachedInfo()
	if info.Cluster == nil {
		return "", 0, fmt.Errorf("stream %s has no cluster info", stream)
	}
	current := 0
	for _, r := range info.Cluster.Replicas {
		if r.Current {
			current++
		}
	}
	return info.Cluster.Leader, current, nil
}

// leaderWatch polls every stream's leader and counts its changes.
type leaderWatch struct {
	mu      sync.Mutex
	leaders map[string]string
	moves   map[string]int
	done    chan struct{}
	wg      sync.WaitGroup
}

func watchLeaders(t *testing.T, js natsjs.JetStream, names []string) *leaderWatch {
	w := &leaderWatch{leaders: map[string]string{}, moves: map[string]int{}, done: make(chan struct{})}
	for _, name := range names {
		leader, _, err := streamLeader(t, js, name)
		if err != nil {
			t.Fatal(err)
		}
		w.leaders[name] = leader
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			select {
			case <-w.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for _, name := range names {
				leader, _, err := streamLeader(t, js, name)
				if err != nil || leader == "" {
					continue
				}
				w.mu.Lock()
				if leader != w.leaders[name] {
					w.leaders[name] = leader
					w.moves[name]++
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *leaderWatch) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, l := range w.leaders {
		out[l]++
	}
	return out
}

// stop ends the watch and returns the moves by stream; later calls
// return the same.
func (w *leaderWatch) stop() map[string]int {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.moves
}

func leaderCounts(ls []v1alpha1.ServerLeaders) string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s=%d", l.Server, l.Groups))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
