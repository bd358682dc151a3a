package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// TestServersPending: servers not on the update revision, and servers a
// scale-down has yet to remove, are pending. Careless variant watched
// failing: spec.replicas - readyReplicas calls a finished rollout with a
// server briefly unready "pending" and a scale-down with all ready done.
func TestServersPending(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		want, replicas, updated int32
		pending                 int32
	}{
		{"settled", 3, 3, 3, 0},
		{"rollout begun, none replaced yet", 3, 3, 0, 3},
		{"rollout one done of three", 3, 3, 1, 2},
		{"scale-down from five to three", 3, 5, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1alpha1.NatsCluster{Spec: v1alpha1.NatsClusterSpec{Replicas: ptr.To(tc.want)}}
			sts := &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{Replicas: tc.replicas, UpdatedReplicas: tc.updated, ReadyReplicas: tc.replicas}}
			got := clusterMetrics(c, &status.ClusterObservation{StatefulSet: sts}, v1alpha1.NatsClusterStatus{ReadyReplicas: tc.replicas})
			if got.Pending != tc.pending {
				t.Fatalf("pending %d, want %d", got.Pending, tc.pending)
			}
		})
	}
}

// TestMonitoringVerdict: without the Prometheus Operator's CRDs the
// condition says so, with the reason a user can search for.
func TestMonitoringVerdict(t *testing.T) {
	c := &v1alpha1.NatsCluster{Spec: v1alpha1.NatsClusterSpec{Monitoring: &v1alpha1.MonitoringSpec{Enabled: true}}}
	if v := monitoringVerdict(c, false); v.Status != metav1.ConditionFalse || v.Reason != v1alpha1.ReasonPodMonitorCRDMissing {
		t.Fatalf("without CRDs: %+v", v)
	}
	if v := monitoringVerdict(c, true); v.Status != metav1.ConditionTrue {
		t.Fatalf("with CRDs: %+v", v)
	}
	if v := monitoringVerdict(&v1alpha1.NatsCluster{}, true); v != nil {
		t.Fatalf("without spec.monitoring: %+v", v)
	}
}
