package natscluster

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Labels are a claim, not a proof: anyone who may create a pod in the
// namespace can give it a cluster's labels. The operator deletes pods, sends
// them its system password and patches claims, so it takes as a cluster's
// only what the cluster's own StatefulSet controls.

// memberClaim reports whether claim is a data claim of c's servers: named
// after the StatefulSet's claim template and one of its pods, and owned, if
// by anything, by that StatefulSet or one of its pods. (Claims the
// StatefulSet retains carry no owner at all.)
func memberClaim(c *v1alpha1.NatsCluster, claim *corev1.PersistentVolumeClaim, sts *appsv1.StatefulSet) bool {
	pod, ok := strings.CutPrefix(claim.Name, c.DataVolume()+"-")
	if !ok {
		return false
	}
	if _, ok := c.PodOrdinal(pod); !ok {
		return false
	}
	for _, ref := range claim.OwnerReferences {
		switch {
		case ref.Kind == "StatefulSet" && ref.UID == sts.UID:
		case ref.Kind == "Pod" && ref.Name == pod:
		default:
			return false
		}
	}
	return true
}
