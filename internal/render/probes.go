package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The probes look early and often: a startup probe that waits 10 s before
// its first look costs 10 s per server on every rollout. The startup probe
// then allows up to 10 minutes, since JetStream recovering a large store is
// slow and must not be killed half-way.

func healthProbe(path string, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path:   path,
			Port:   intstr.FromString("monitor"),
			Scheme: corev1.URISchemeHTTP,
		}},
		PeriodSeconds:    period,
		TimeoutSeconds:   5,
		SuccessThreshold: 1,
		FailureThreshold: failures,
	}
}

// startupProbe passes once the server answers at all.
func startupProbe() *corev1.Probe { return healthProbe("/healthz", 1, 600) }

// readinessProbe passes once this server's JetStream is up, without waiting
// for every stream to be current (which would block a whole cluster's start).
func readinessProbe() *corev1.Probe { return healthProbe("/healthz?js-server-only=true", 2, 3) }

// livenessProbe only fails when JetStream is gone altogether.
func livenessProbe() *corev1.Probe { return healthProbe("/healthz?js-enabled-only=true", 10, 3) }
