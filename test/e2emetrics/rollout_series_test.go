package e2emetrics_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	opmetrics "github.com/kubenats/kubenats/internal/metrics"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/promserver"
)

const (
	olderVersion = "2.14.10"
	newerVersion = "2.15.3"
	// changeTimeout bounds a rolling upgrade or a route TLS transition of
	// three servers on a busy machine.
	changeTimeout = 5 * time.Minute
)

// TestRolloutAndTransitionSeenThroughPrometheus: a real Prometheus scrapes
// the servers (through the PodMonitor render makes) and the operator (its
// HTTPS endpoint, with a ServiceAccount token bound to the shipped
// kubenats-metrics-reader role, as a user's Prometheus would) while a
// monitored cluster goes through a rolling upgrade and then a route TLS
// transition. From the samples Prometheus stored:
//
//   - the operator's kubenats_natscluster_servers_pending rises as the
//     upgrade starts and comes down one server at a time to 0, and
//     kubenats_natscluster_waiting has a series while it rolls;
//   - every server's series go on under the same server_id (its name)
//     across both, with no gap longer than that server's own restart
//     (from the old pod's deletion to the new one's readiness, seen by a
//     pod watch) plus one scrape interval and Prometheus's 5 s discovery
//     period.
//
// Careless variants watched failing: the reconciler publishing Pending as
// 0 ("servers_pending never rose during the upgrade"); the metrics
// container serving 10 s after it starts ("nats-1: a gap of 14.1s ...
// beyond its restart"); the exporter labelling series with the server's
// per-start id ("nats-0 served under 2 server_id values").
func TestRolloutAndTransitionSeenThroughPrometheus(t *testing.T) {
	t.Parallel()
	f := e2ekit.FormCluster(t, monitored(""), func(s *v1alpha1.NatsClusterSpec) { s.Version = olderVersion })
	restarts := watchRestarts(t, f.NS)
	jobs := append(scrapeJobs(t, adminKubeconfig(t), f.Cluster), operatorJob(t))
	p := startPrometheus(t, "rollout", jobs, false)
	ctx := e2ekit.Ctx(t)
	sel := selector(f)
	opSel := fmt.Sprintf(`namespace=%q,natscluster=%q`, f.NS, f.Cluster.Name)
	// Both targets answer before anything changes: a baseline to compare.
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if _, err := promOne(ctx, p, fmt.Sprintf(`%s{%s}`, opmetrics.ClusterPending, opSel)); err != nil {
			return fmt.Errorf("the operator's series: %w", err)
		}
		got, err := p.Query(ctx, fmt.Sprintf(`nats_varz_connections{%s}`, sel))
		if err != nil || len(got) != 3 {
			return fmt.Errorf("servers' series: %d, %v", len(got), err)
		}
		return nil
	})
	began := time.Now()

	change(t, f, restarts, 1, "rolling upgrade", func(s *v1alpha1.NatsClusterSpec) { s.Version = newerVersion })
	// The operator publishes the status it wrote last; a scrape after the
	// cluster settled must show it at 0 before the next change begins.
	rolled := time.Now()
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		q := fmt.Sprintf(`%s{%s}`, opmetrics.ClusterPending, opSel)
		v, err := promOne(ctx, p, q)
		if err != nil {
			return err
		}
		at, err := promOne(ctx, p, "timestamp("+q+")")
		if err != nil {
			return err
		}
		if v != 0 || at < float64(rolled.UnixMilli())/1000 {
			return fmt.Errorf("servers_pending %v at %v, want 0 scraped after the upgrade", v, at)
		}
		return nil
	})
	upgraded := time.Now()
	change(t, f, restarts, 2, "route TLS transition", func(s *v1alpha1.NatsClusterSpec) { s.TLS.Routes.Enabled = ptr.To(false) })
	// The settled cluster's scrapes are in before the samples are read.
	settled := time.Now()
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		last, err := promOne(ctx, p, fmt.Sprintf(`min(timestamp(nats_varz_connections{%s}))`, sel))
		if err != nil || last < float64(settled.UnixMilli())/1000 {
			return fmt.Errorf("no scrape of every server since the cluster settled yet (%v)", err)
		}
		return nil
	})
	end := time.Now()
	window := end.Sub(began) + 10*time.Second

	pending, err := p.Samples(ctx, fmt.Sprintf(`%s{%s}`, opmetrics.ClusterPending, opSel), upgraded, upgraded.Sub(began)+10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkPendingStaircase(t, pending)
	waiting, err := p.Samples(ctx, fmt.Sprintf(`%s{%s}`, opmetrics.ClusterWaiting, opSel), upgraded, upgraded.Sub(began)+10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(waiting) == 0 {
		t.Error("kubenats_natscluster_waiting had no series while the cluster rolled")
	}
	for _, s := range waiting {
		t.Logf("waiting for %s in %d samples", s.Labels["reason"], len(s.Points))
	}

	series, err := p.Samples(ctx, fmt.Sprintf(`nats_varz_connections{%s}`, sel), end, window)
	if err != nil {
		t.Fatal(err)
	}
	checkNoGaps(t, series, began, settled, restarts.downtimes())
}

// change edits f's spec and waits until every server was replaced
// (counted from pod UIDs) times times in all and the cluster is Ready for
// the new generation.
func change(t *testing.T, f *e2ekit.Formed, r *restarts, times int, what string, edit func(*v1alpha1.NatsClusterSpec)) {
	t.Helper()
	c := &v1alpha1.NatsCluster{}
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if err := cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(f.Cluster), c); err != nil {
			return err
		}
		edit(&c.Spec)
		return cluster.Client.Update(e2ekit.Ctx(t), c)
	})
	start := time.Now()
	e2ekit.Eventually(t, changeTimeout, func() error {
		for _, pod := range f.Pods {
			if n := r.count(pod); n < times {
				return fmt.Errorf("%s: %s replaced %d times, want %d", what, pod, n, times)
			}
		}
		if err := cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(f.Cluster), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if c.Status.ObservedGeneration != c.Generation || ready == nil || ready.Status != metav1.ConditionTrue {
			return fmt.Errorf("%s: generation %d observed %d, Ready %+v", what, c.Generation, c.Status.ObservedGeneration, ready)
		}
		return nil
	})
	t.Logf("%s done in %s", what, time.Since(start).Round(time.Second))
}

// checkPendingStaircase: the operator's pending servers, in the order
// Prometheus scraped them, rise and come down to 0 without rising again,
// through every value between, from 2 at least.
//
// The value 3 lasts only from the moment the StatefulSet controller takes
// the new revision to the moment it re-creates the first server the
// operator deleted (a terminating pod is not counted as updated): a few
// hundred milliseconds on the loopback cluster, which a scrape every
// 500 ms catches in some runs only (TestServersPending shows 3 computed
// for that moment). Every later step lasts a whole server restart and its
// settling, several scrapes.
func checkPendingStaircase(t *testing.T, series []promserver.Series) {
	t.Helper()
	if len(series) != 1 {
		t.Fatalf("servers_pending: %d series, want one", len(series))
	}
	var steps []float64
	for _, p := range series[0].Points {
		if len(steps) == 0 || steps[len(steps)-1] != p.V {
			steps = append(steps, p.V)
		}
	}
	t.Logf("servers_pending through the upgrade: %v (%d samples)", steps, len(series[0].Points))
	peak := -1
	for i, v := range steps {
		if peak < 0 || v > steps[peak] {
			peak = i
		}
	}
	if peak < 0 || steps[peak] < 2 {
		t.Fatalf("servers_pending never rose during the upgrade (values %v)", steps)
	}
	if steps[len(steps)-1] != 0 {
		t.Errorf("servers_pending ended at %v, not 0 (values %v)", steps[len(steps)-1], steps)
	}
	for i := peak + 1; i < len(steps); i++ {
		if steps[i] > steps[i-1] {
			t.Errorf("servers_pending rose again mid-rollout (values %v)", steps)
		}
	}
	seen := map[float64]bool{}
	for _, v := range steps[peak:] {
		seen[v] = true
	}
	for _, v := range []float64{2, 1, 0} {
		if !seen[v] {
			t.Errorf("servers_pending skipped %v: the rollout's progress is not shown server by server (values %v)", v, steps)
		}
	}
}

// checkNoGaps: per server (server_name), the union of its series' samples
// (a re-created pod has a new address, so a new instance label) has no gap
// longer than its longest restart plus one scrape interval and
// Prometheus's discovery period, and one server_id throughout.
func checkNoGaps(t *testing.T, series []promserver.Series, began, settled time.Time, downtimes map[string]time.Duration) {
	t.Helper()
	times := map[string][]time.Time{}
	ids := map[string]map[string]bool{}
	for _, s := range series {
		name := s.Labels["server_name"]
		if ids[name] == nil {
			ids[name] = map[string]bool{}
		}
		ids[name][s.Labels["server_id"]] = true
		for _, p := range s.Points {
			times[name] = append(times[name], p.T)
		}
	}
	if len(times) != 3 {
		t.Fatalf("series for servers %v, want nats-0..2", keys(times))
	}
	// Prometheus passes discovered targets on to its scrape loops at most
	// every 5 s (the discovery manager's update period): a re-created pod
	// may wait that long for its first scrape, a delay of Prometheus, not
	// of the operator or the exporter.
	const discovery = 5 * time.Second
	for name, ts := range times {
		if len(ids[name]) != 1 || !ids[name][name] {
			t.Errorf("%s served under %d server_id values %v, want its name alone", name, len(ids[name]), keys(ids[name]))
		}
		// Every server was scraped by the time the changes began and again
		// after the cluster settled (both waited for): a series that
		// starts late or stops early has its gap at an end.
		ts = append(ts, began, settled)
		sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
		for len(ts) > 0 && ts[len(ts)-1].After(settled) {
			ts = ts[:len(ts)-1]
		}
		var gap time.Duration
		for i := 1; i < len(ts); i++ {
			gap = max(gap, ts[i].Sub(ts[i-1]))
		}
		down, ok := downtimes[name]
		if !ok {
			t.Errorf("%s was never seen restarting", name)
		}
		bound := down + promScrape + discovery
		t.Logf("%s: longest gap %s, its longest restart %s, %d samples", name, gap.Round(10*time.Millisecond), down.Round(10*time.Millisecond), len(ts))
		if gap > bound {
			t.Errorf("%s: a gap of %s in its series, more than one scrape interval (and discovery) beyond its restart of %s", name, gap.Round(100*time.Millisecond), down.Round(100*time.Millisecond))
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// restarts records, from a watch of the namespace's pods, each server's
// restarts: from the moment its pod is marked for deletion to the moment
// the pod that replaces it (another UID) is Ready.
type restarts struct {
	mu       sync.Mutex
	deleting map[string]time.Time // pod name -> deletion seen, until its successor is Ready
	old      map[string]types.UID
	longest  map[string]time.Duration
	replaced map[string]int
}

func watchRestarts(t *testing.T, ns string) *restarts {
	t.Helper()
	r := &restarts{deleting: map[string]time.Time{}, old: map[string]types.UID{}, longest: map[string]time.Duration{}, replaced: map[string]int{}}
	if err := cluster.WatchNamespace(e2ekit.Ctx(t), ns, func(ev watch.Event, at time.Time) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || !strings.HasPrefix(pod.Name, "nats-") {
			return
		}
		r.observe(pod, ev.Type, at)
	}, &corev1.PodList{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *restarts) observe(pod *corev1.Pod, typ watch.EventType, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if pod.DeletionTimestamp != nil || typ == watch.Deleted {
		if _, seen := r.deleting[pod.Name]; !seen {
			r.deleting[pod.Name], r.old[pod.Name] = at, pod.UID
		}
		return
	}
	since, restarting := r.deleting[pod.Name]
	if !restarting || pod.UID == r.old[pod.Name] || !podReady(pod) {
		return
	}
	r.longest[pod.Name] = max(r.longest[pod.Name], at.Sub(since))
	r.replaced[pod.Name]++
	delete(r.deleting, pod.Name)
}

// count is how many times pod was replaced by a Ready successor.
func (r *restarts) count(pod string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replaced[pod]
}

// downtimes are each server's longest restart so far.
func (r *restarts) downtimes() map[string]time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Duration, len(r.longest))
	for k, v := range r.longest {
		out[k] = v
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
