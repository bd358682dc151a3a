package manager

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubenats/kubenats/internal/jetstream"
	opmetrics "github.com/kubenats/kubenats/internal/metrics"
)

// MetricsOptions serve the metrics over HTTPS to callers the API server
// authenticates (TokenReview) and authorizes for GET /metrics
// (SubjectAccessReview; the kubenats-metrics-reader ClusterRole grants it):
// metrics_auth.go.
// The operator's own RBAC for both reviews is config/rbac/metrics_auth_role.yaml.
// The certificate is MetricsCertDir's (checkMetricsCert), watched for
// renewals; without one the server makes a self-signed one in memory.
// InsecureMetrics turns it all off, for a local run only.
func MetricsOptions(o Options) metricsserver.Options {
	if o.InsecureMetrics {
		return metricsserver.Options{BindAddress: o.MetricsBindAddress}
	}
	return metricsserver.Options{
		BindAddress:    o.MetricsBindAddress,
		SecureServing:  true,
		FilterProvider: metricsAuth,
		CertDir:        o.MetricsCertDir,
		CertName:       metricsCertFile,
		KeyName:        metricsKeyFile,
	}
}

// poolConnections is the JetStream pool's open connections, one per NATS
// system and identity: a gauge that shows the pool shares them. A process
// that starts several managers (the tests) shows the newest one's pool.
var (
	currentPool         atomic.Pointer[jetstream.Pool]
	registerPoolMetrics sync.Once
)

func servePoolMetrics(p *jetstream.Pool) {
	currentPool.Store(p)
	registerPoolMetrics.Do(func() {
		metrics.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: opmetrics.PoolConnections,
			Help: "Open or opening connections of the JetStream pool, one per NATS system and identity.",
		}, func() float64 {
			if p := currentPool.Load(); p != nil {
				return float64(p.Len())
			}
			return 0
		}))
	})
}
