package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// formationTimeline is when this process's watches first saw each step of a
// NatsCluster's formation: where the time between the create call and Ready
// goes (operator, StatefulSet controller, kubelet, servers, probes).
type formationTimeline struct {
	statefulSet time.Time            // the operator's StatefulSet exists
	podCreated  map[string]time.Time // the StatefulSet controller made the pod
	podRunning  map[string]time.Time // the kubelet reports the nats container running
	// children is the first sight of each object the operator makes, by
	// kind/name, and of the NatsCluster's first status.
	children map[string]time.Time
}

func newFormationTimeline() formationTimeline {
	return formationTimeline{podCreated: map[string]time.Time{}, podRunning: map[string]time.Time{}, children: map[string]time.Time{}}
}

// observe records the first sight of each step in obj; the caller holds the
// watch's lock.
func (t *formationTimeline) observe(obj any, at time.Time) {
	if o, ok := obj.(client.Object); ok {
		kind := strings.TrimPrefix(fmt.Sprintf("%T", o), "*")
		if nc, ok := o.(*v1alpha1.NatsCluster); ok && len(nc.Status.Conditions) > 0 {
			kind += "(status)"
		}
		if _, seen := t.children[kind+"/"+o.GetName()]; kind != "" && !seen {
			t.children[kind+"/"+o.GetName()] = at
		}
	}
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		if t.statefulSet.IsZero() {
			t.statefulSet = at
		}
	case *corev1.Pod:
		if _, ok := t.podCreated[o.Name]; !ok {
			t.podCreated[o.Name] = at
		}
		for _, cs := range o.Status.ContainerStatuses {
			if _, ok := t.podRunning[o.Name]; !ok && cs.Name == "nats" && cs.State.Running != nil {
				t.podRunning[o.Name] = at
			}
		}
	}
}

// summary is the timeline in seconds since start, each step's first and
// last pod.
func (t *formationTimeline) summary(start time.Time) string {
	span := func(m map[string]time.Time) string {
		if len(m) == 0 {
			return "never"
		}
		var ds []time.Duration
		for _, at := range m {
			ds = append(ds, at.Sub(start))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return fmt.Sprintf("%.3f-%.3fs", ds[0].Seconds(), ds[len(ds)-1].Seconds())
	}
	parts := []string{
		fmt.Sprintf("StatefulSet %.3fs", t.statefulSet.Sub(start).Seconds()),
		"pods created " + span(t.podCreated),
		"nats containers running " + span(t.podRunning),
	}
	var children []string
	for name, at := range t.children {
		children = append(children, fmt.Sprintf("%.3f %s", at.Sub(start).Seconds(), name))
	}
	sort.Strings(children)
	return strings.Join(parts, ", ") + "; objects first seen: " + strings.Join(children, ", ")
}

// firstRunning is when the first nats container ran, since start; zero when
// none did.
func (t *formationTimeline) firstRunning(start time.Time) time.Duration {
	var first time.Duration
	for _, at := range t.podRunning {
		if d := at.Sub(start); first == 0 || d < first {
			first = d
		}
	}
	return first
}
