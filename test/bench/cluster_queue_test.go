package bench

import (
	"fmt"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// queueStats is the NatsCluster controller's own account of its work, from
// controller-runtime's metrics in this process (the operator runs here):
// how long requests waited in its queue and how long its passes took. The
// registry is the process's, shared by the runs: a formation's figures are
// the difference of two readings.
type queueStats struct {
	waitSum, waits     float64 // workqueue_queue_duration_seconds
	passSum, passes    float64 // controller_runtime_reconcile_time_seconds
	workSum, workItems float64 // workqueue_work_duration_seconds
}

func readQueueStats() queueStats {
	var q queueStats
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return q
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			ours := false
			for _, l := range m.GetLabel() {
				if (l.GetName() == "name" || l.GetName() == "controller") && l.GetValue() == "natscluster" {
					ours = true
				}
			}
			h := m.GetHistogram()
			if !ours || h == nil {
				continue
			}
			switch f.GetName() {
			case "workqueue_queue_duration_seconds":
				q.waitSum, q.waits = h.GetSampleSum(), float64(h.GetSampleCount())
			case "controller_runtime_reconcile_time_seconds":
				q.passSum, q.passes = h.GetSampleSum(), float64(h.GetSampleCount())
			case "workqueue_work_duration_seconds":
				q.workSum, q.workItems = h.GetSampleSum(), float64(h.GetSampleCount())
			}
		}
	}
	return q
}

// since is what happened between an earlier reading and q, as text.
func (q queueStats) since(before queueStats) string {
	return fmt.Sprintf("NatsCluster controller: %.0f requests waited %.3fs in all in its queue; %.0f passes took %.3fs in all",
		q.waits-before.waits, q.waitSum-before.waitSum, q.passes-before.passes, q.passSum-before.passSum)
}
