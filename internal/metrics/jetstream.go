package metrics

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Resources counts JetStream resources (Stream, Consumer, KeyValue,
// ObjectStore) by kind, namespace and state (their Ready condition's
// reason), from the status each pass computes.
type Resources struct {
	mu    sync.Mutex
	state map[resKey]string
	desc  *prometheus.Desc
}

type resKey struct{ kind, namespace, name string }

// NewResources makes an empty count.
func NewResources() *Resources {
	return &Resources{state: map[resKey]string{}, desc: prometheus.NewDesc(JetStreamResources,
		"JetStream resources by kind, namespace and state (the reason of their Ready condition).",
		[]string{"kind", "namespace", "state"}, nil)}
}

// Set records the state of one resource.
func (r *Resources) Set(kind, namespace, name, state string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state[resKey{kind, namespace, name}] = state
}

// Delete forgets one resource.
func (r *Resources) Delete(kind, namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.state, resKey{kind, namespace, name})
}

// Describe implements prometheus.Collector.
func (r *Resources) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect implements prometheus.Collector: counts, never one series per
// resource, so that ten thousand streams cost a handful of series.
func (r *Resources) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	counts := map[[3]string]int{}
	for k, st := range r.state {
		counts[[3]string{k.kind, k.namespace, st}]++
	}
	r.mu.Unlock()
	keys := make([][3]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		for n := range 3 {
			if keys[i][n] != keys[j][n] {
				return keys[i][n] < keys[j][n]
			}
		}
		return false
	})
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(r.desc, prometheus.GaugeValue, float64(counts[k]), k[0], k[1], k[2])
	}
}
