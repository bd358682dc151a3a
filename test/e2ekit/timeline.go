package e2ekit

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/loopback"
)

// timeline records when this process saw a cluster's milestones, from
// watch events, for timing log lines (measurements, never assertions).
// Watch events arrive milliseconds after the API server stored the
// change, much finer than the seconds of a condition's transition time.
type timeline struct {
	mu    sync.Mutex
	start time.Time
	marks map[string]time.Time // first time each milestone was seen
	// podReady is the latest transition of each pod to Ready.
	podReady     map[string]time.Time
	wasReady     map[string]bool
	clusterReady time.Time
}

// watchTimeline watches ns until the test ends; start is the moment the
// clock starts (the NatsCluster's creation).
func watchTimeline(t *testing.T, ns string) *timeline {
	t.Helper()
	tl := &timeline{marks: map[string]time.Time{}, podReady: map[string]time.Time{}, wasReady: map[string]bool{}}
	if err := Cluster.WatchNamespace(Ctx(t), ns, func(ev watch.Event, at time.Time) {
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			tl.observe(ev.Object, at)
		}
	}, &corev1.PodList{}, &appsv1.StatefulSetList{}, &v1alpha1.NatsClusterList{}); err != nil {
		t.Fatal(err)
	}
	return tl
}

// begin starts the clock.
func (tl *timeline) begin() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.start = time.Now()
}

// mark records a milestone the test itself reaches.
func (tl *timeline) mark(what string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.marks[what] = time.Now()
}

func (tl *timeline) observe(obj any, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	mark := func(what string) {
		if _, ok := tl.marks[what]; !ok {
			tl.marks[what] = at
		}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		mark("pod " + o.Name + " created")
		if o.Spec.NodeName != "" {
			mark("pod " + o.Name + " bound")
		}
		for _, cs := range o.Status.ContainerStatuses {
			if cs.Name == "nats" && cs.State.Running != nil {
				mark("pod " + o.Name + " nats-server running")
			}
			if cs.Name == "nats" && cs.Started != nil && *cs.Started {
				mark("pod " + o.Name + " startup probe passed")
			}
		}
		ready := loopback.PodReady(o)
		if ready && !tl.wasReady[o.Name] {
			tl.podReady[o.Name] = at
			mark("pod " + o.Name + " Ready")
		}
		tl.wasReady[o.Name] = ready
	case *appsv1.StatefulSet:
		mark("StatefulSet created")
		if r := o.Status.ReadyReplicas; r > 0 {
			mark(fmt.Sprintf("StatefulSet readyReplicas %d", r))
		}
	case *v1alpha1.NatsCluster:
		c := meta.FindStatusCondition(o.Status.Conditions, v1alpha1.ConditionReady)
		if o.Status.Phase == v1alpha1.PhaseReady && c != nil && c.Status == metav1.ConditionTrue {
			mark("NatsCluster Ready")
			if tl.clusterReady.IsZero() {
				tl.clusterReady = at
			}
		}
	}
}

// report logs every milestone relative to the start, and the two numbers
// the issue asks for: creation to Ready, and the last pod's Ready to the
// NatsCluster's.
func (tl *timeline) report(t *testing.T) {
	t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	type entry struct {
		what string
		at   time.Duration
	}
	var entries []entry
	for what, at := range tl.marks {
		entries = append(entries, entry{what, at.Sub(tl.start)})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].at < entries[j].at })
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "\n  %8.3fs  %s", e.at.Seconds(), e.what)
	}
	t.Logf("timeline since the NatsCluster was created:%s", b.String())
	var lastPod time.Time
	for _, at := range tl.podReady {
		if at.After(lastPod) && !at.After(tl.clusterReady) {
			lastPod = at
		}
	}
	if tl.clusterReady.IsZero() || lastPod.IsZero() {
		t.Logf("timing: incomplete (cluster Ready seen: %t)", !tl.clusterReady.IsZero())
		return
	}
	t.Logf("timing: NatsCluster Ready %.3fs after creation; %.3fs after the last pod turned Ready",
		tl.clusterReady.Sub(tl.start).Seconds(), tl.clusterReady.Sub(lastPod).Seconds())
}
