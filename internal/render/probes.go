package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// The probes look early and often: a startup probe that waits 10 s before
// its first look costs 10 s per server on every rollout. The startup probe
// then allows up to 10 minutes, since JetStream recovering a large store is
// slow and must not be killed half-way.

func healthProbe(c *v1alpha1.NatsCluster, path string, period, failures int32) *corev1.Probe {
	scheme := corev1.URISchemeHTTP
	if c.Spec.MonitorTLSEnabled() {
		scheme = corev1.URISchemeHTTPS // the kubelet does not verify it
	}
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path:   path,
			Port:   intstr.FromString("monitor"),
			Scheme: scheme,
		}},
		PeriodSeconds:    period,
		TimeoutSeconds:   5,
		SuccessThreshold: 1,
		FailureThreshold: failures,
	}
}

// startupProbe passes once the server answers at all.
func startupProbe(c *v1alpha1.NatsCluster) *corev1.Probe { return healthProbe(c, "/healthz", 1, 600) }

// readinessProbe passes once this server's JetStream is up, without waiting
// for every stream to be current (which would block a whole cluster's start).
func readinessProbe(c *v1alpha1.NatsCluster) *corev1.Probe {
	return healthProbe(c, "/healthz?js-server-only=true", 2, 3)
}

// livenessProbe only fails when JetStream is gone altogether.
func livenessProbe(c *v1alpha1.NatsCluster) *corev1.Probe {
	return healthProbe(c, "/healthz?js-enabled-only=true", 10, 3)
}
