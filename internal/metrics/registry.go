package metrics

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The operator's sets, registered once in controller-runtime's registry,
// which the manager serves behind its authentication. A process that
// starts several managers (the tests) shares them.
var (
	ClustersSet  = NewClusters()
	ResourcesSet = NewResources()
	register     sync.Once
)

// Register adds the sets to controller-runtime's registry, once.
func Register() {
	register.Do(func() {
		metrics.Registry.MustRegister(ClustersSet, ResourcesSet, ServerCalls, ServerCallErrors, Writes, BackupLastSuccess, BackupLastFailed)
	})
}
