package manager

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsOptions serve the metrics over HTTPS to callers the API server
// authenticates (TokenReview) and authorizes for GET /metrics
// (SubjectAccessReview; the kubenats-metrics-reader ClusterRole grants it).
// The operator's own RBAC for both reviews is config/rbac/metrics_auth_role.yaml.
// Without a certificate in CertDir the server makes a self-signed one in
// memory. InsecureMetrics turns it all off, for a local run only.
func MetricsOptions(o Options) metricsserver.Options {
	if o.InsecureMetrics {
		return metricsserver.Options{BindAddress: o.MetricsBindAddress}
	}
	return metricsserver.Options{
		BindAddress:    o.MetricsBindAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
	}
}
