package metrics

import "github.com/prometheus/client_golang/prometheus"

// What the JetStream reconcilers did on the servers, counted where they
// did it (one pass's outcome, not the Kubernetes events, which fold
// repeats): each call and whether it failed, and each write by what it
// was. A drift corrected is a write the spec did not ask for, the figure
// an on-call wants to see climb.
var (
	ServerCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: JetStreamServerCalls,
		Help: "JetStream API calls the operator made to the servers, by kind and call (observe, create, update, delete)."},
		[]string{"kind", "call"})
	ServerCallErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: JetStreamServerCallErrors,
		Help: "JetStream API calls that failed (not counting the answer that an object does not exist), by kind and call."},
		[]string{"kind", "call"})
	Writes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: JetStreamWrites,
		Help: "Server objects the operator wrote, by kind and what the write was (created, updated, recreated, drift_corrected, adopted)."},
		[]string{"kind", "action"})
)

// CountCall records one call of kind; failed says whether it failed.
func CountCall(kind, call string, failed bool) {
	ServerCalls.WithLabelValues(kind, call).Inc()
	if failed {
		ServerCallErrors.WithLabelValues(kind, call).Inc()
	}
}
