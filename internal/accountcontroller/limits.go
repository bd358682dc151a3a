package accountcontroller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/status"
)

// clusterLimits are the defaults and maxima cluster c sets for the
// accounts on it (either nil).
func clusterLimits(c *v1alpha1.NatsCluster) (defaults, maxima *v1alpha1.AccountLimits) {
	if from := c.Spec.Auth.Accounts; from != nil {
		return from.DefaultLimits, from.MaxLimits
	}
	return nil, nil
}

// boundLimits are the limits a's JWT carries on c, and those a asked
// above c's maximum.
func boundLimits(c *v1alpha1.NatsCluster, a *v1alpha1.NatsAccount) (v1alpha1.AccountLimits, []accounts.LimitClamp) {
	defaults, maxima := clusterLimits(c)
	return accounts.BoundLimits(a.Spec.Limits, defaults, maxima)
}

// limitsVerdict is the LimitsWithinMaximum condition of an account on c
// whose asked limits were clamped as clamps: nil when c bounds nothing.
func limitsVerdict(c *v1alpha1.NatsCluster, clamps []accounts.LimitClamp) *status.Verdict {
	if defaults, maxima := clusterLimits(c); defaults == nil && maxima == nil {
		return nil
	}
	if len(clamps) == 0 {
		return &status.Verdict{Type: v1alpha1.ConditionLimitsWithinMaximum, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonLimitsWithinMaximum, Message: "the account's JWT carries the limits it asks for, or the cluster's defaults"}
	}
	return &status.Verdict{Type: v1alpha1.ConditionLimitsWithinMaximum, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonLimitsClamped, Message: accounts.ClampsMessage(clamps)}
}

// warnClamped raises a Warning event when a's limits are newly clamped,
// or clamped otherwise than its condition says: once, not every pass.
func (r *Reconciler) warnClamped(a *v1alpha1.NatsAccount, v *status.Verdict) {
	if v == nil || v.Status != metav1.ConditionFalse {
		return
	}
	if old := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionLimitsWithinMaximum); old != nil &&
		old.Status == v.Status && old.Message == status.BoundMessage(v.Message) {
		return
	}
	r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, v1alpha1.ReasonLimitsClamped, "Sign", "%s", v.Message)
}
