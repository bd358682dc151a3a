package natscluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// announce records an event when the Ready condition changes its reason, so
// that `kubectl describe` tells the story without one event per pass.
func (r *Reconciler) announce(c *v1alpha1.NatsCluster, prev, next v1alpha1.NatsClusterStatus) {
	// The earliest expiry moves when a certificate is renewed, whoever
	// issued it (the operator, cert-manager, the user).
	if was, now := prev.CertificatesExpiry, next.CertificatesExpiry; was != nil && now != nil && !was.Equal(now) {
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "CertificatesRotated", "Rotate",
			"certificates renewed: the first now expires at %s (was %s)", now.UTC().Format(time.RFC3339), was.UTC().Format(time.RFC3339))
	}
	was := meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionReady)
	now := meta.FindStatusCondition(next.Conditions, v1alpha1.ConditionReady)
	if now == nil || (was != nil && was.Reason == now.Reason && was.Status == now.Status) {
		return
	}
	kind := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue && now.Reason != v1alpha1.ReasonProgressing {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(c, nil, kind, now.Reason, "Reconcile", "%s", now.Message)
}
