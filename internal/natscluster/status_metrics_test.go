package natscluster

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/metrics"
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

// TestClusterGaugesFollowTheStatus: the gauges read the status the pass
// computed: reload pending while ConfigLoaded is False, the Ready reason
// as what it waits for, the certificates' expiry, and the mesh stage from
// MeshReady's reason (trouble under STRICT is still Strict: the operator
// does not loosen it unasked). Careless variants: a mesh stage read from
// the spec would call a cluster rolled back to PERMISSIVE Strict; waiting
// read when Ready is True would leave a series behind a settled cluster.
func TestClusterGaugesFollowTheStatus(t *testing.T) {
	expiry := metav1.NewTime(time.Unix(1_900_000_000, 0))
	cond := func(typ string, st metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason}
	}
	for _, tc := range []struct {
		name   string
		status v1alpha1.NatsClusterStatus
		want   metrics.Cluster
	}{
		{"settled", v1alpha1.NatsClusterStatus{Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady),
			cond(v1alpha1.ConditionConfigLoaded, metav1.ConditionTrue, "Loaded")}, CertificatesExpiry: &expiry},
			metrics.Cluster{CertExpiry: expiry}},
		{"a reload not confirmed", v1alpha1.NatsClusterStatus{Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonReloadPending),
			cond(v1alpha1.ConditionConfigLoaded, metav1.ConditionFalse, v1alpha1.ReasonReloadPending)}},
			metrics.Cluster{ReloadPending: true, Waiting: v1alpha1.ReasonReloadPending}},
		{"STRICT", v1alpha1.NatsClusterStatus{Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionMeshReady, metav1.ConditionTrue, v1alpha1.ReasonMeshStrict)}},
			metrics.Cluster{MeshStage: "Strict"}},
		{"trouble under STRICT, reported", v1alpha1.NatsClusterStatus{Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionMeshReady, metav1.ConditionFalse, v1alpha1.ReasonMeshStrictUnhealthy)}},
			metrics.Cluster{MeshStage: "Strict"}},
		{"rolled back to PERMISSIVE", v1alpha1.NatsClusterStatus{Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionMeshReady, metav1.ConditionFalse, v1alpha1.ReasonMeshRolledBack)}},
			metrics.Cluster{MeshStage: "Permissive"}},
		{"waiting for sidecars", v1alpha1.NatsClusterStatus{Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionMeshReady, metav1.ConditionFalse, v1alpha1.ReasonWaitingForSidecars)}},
			metrics.Cluster{MeshStage: "Permissive"}},
		{"leaders counted", v1alpha1.NatsClusterStatus{Leaders: []v1alpha1.ServerLeaders{{Server: "nats-0", Groups: 4}, {Server: "nats-1", Groups: 2}}},
			metrics.Cluster{Leaders: map[string]int32{"nats-0": 4, "nats-1": 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1alpha1.NatsCluster{Spec: v1alpha1.NatsClusterSpec{Replicas: ptr.To[int32](3)}}
			got := clusterMetrics(c, &status.ClusterObservation{}, tc.status)
			got.Conditions, got.Servers = nil, 0
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("gauges %+v, want %+v", got, tc.want)
			}
		})
	}
}
