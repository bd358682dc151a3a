package natscluster

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/metrics"
	"github.com/kubenats/kubenats/internal/status"
)

// prometheusOperator reports whether the Prometheus Operator's CRDs are
// installed; an error asking is taken as not installed, for this pass.
func (r *Reconciler) prometheusOperator() bool {
	ok, err := r.PrometheusOperator.Installed()
	if err != nil {
		ctrl.Log.WithName("monitoring").V(1).Info("cannot tell whether the Prometheus Operator is installed", "error", err.Error())
	}
	return ok && err == nil
}

// recordMetrics sets the operator's gauges of c from the status just
// computed (next) and what the pass observed: the one place they are set.
func recordMetrics(c *v1alpha1.NatsCluster, obs *status.ClusterObservation, next v1alpha1.NatsClusterStatus) {
	metrics.ClustersSet.Set(c.Namespace, c.Name, clusterMetrics(c, obs, next))
}

// forgetMetrics ends the series of a deleted cluster.
func forgetMetrics(namespace, name string) { metrics.ClustersSet.Delete(namespace, name) }

// clusterMetrics is pure: the gauges' view of one pass.
func clusterMetrics(c *v1alpha1.NatsCluster, obs *status.ClusterObservation, next v1alpha1.NatsClusterStatus) metrics.Cluster {
	want := c.Spec.ReplicaCount()
	m := metrics.Cluster{Conditions: next.Conditions, Servers: want, Ready: next.ReadyReplicas}
	if sts := obs.StatefulSet; sts != nil {
		// Servers not on the update revision yet, and servers beyond the
		// wanted count still running (a scale-down under way).
		m.Pending = max(want-sts.Status.UpdatedReplicas, 0) + max(sts.Status.Replicas-want, 0)
	}
	if loaded := meta.FindStatusCondition(next.Conditions, v1alpha1.ConditionConfigLoaded); loaded != nil {
		m.ReloadPending = loaded.Status == metav1.ConditionFalse
	}
	if ready := meta.FindStatusCondition(next.Conditions, v1alpha1.ConditionReady); ready != nil && ready.Status != metav1.ConditionTrue {
		m.Waiting = ready.Reason
	}
	if next.CertificatesExpiry != nil {
		m.CertExpiry = *next.CertificatesExpiry
	}
	if len(next.Leaders) > 0 {
		m.Leaders = make(map[string]int32, len(next.Leaders))
		for _, l := range next.Leaders {
			m.Leaders[l.Server] = l.Groups
		}
	}
	if mesh := meta.FindStatusCondition(next.Conditions, v1alpha1.ConditionMeshReady); mesh != nil {
		switch mesh.Reason {
		case v1alpha1.ReasonMeshStrict:
			m.MeshStage = "Strict"
		case v1alpha1.ReasonMeshPermissive, v1alpha1.ReasonWaitingForSidecars, v1alpha1.ReasonMeshRolledBack, v1alpha1.ReasonMeshDisabling:
			m.MeshStage = "Permissive"
		case v1alpha1.ReasonMeshStrictUnhealthy:
			m.MeshStage = "Strict"
		}
	}
	return m
}
