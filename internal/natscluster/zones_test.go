package natscluster

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// TestObserveZones: the servers per zone come from the scheduled pods'
// zone labels; ZoneRedundant is there only when two zones or more exist
// (the nodes' or the servers'). Careless variants: counting a pod not
// scheduled yet (it has no zone, and would show as the zone ""), and
// saying nothing when every server sits in one zone of several.
func TestObserveZones(t *testing.T) {
	pod := func(name, node, zone string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.PodSpec{NodeName: node}}
		if zone != "" {
			p.Labels[v1alpha1.LabelZone] = zone
		}
		return p
	}
	for _, tc := range []struct {
		name      string
		pods      []corev1.Pod
		nodeZones []string
		zones     string
		redundant string
	}{
		{"no zone labels: nothing", []corev1.Pod{pod("n0", "x", ""), pod("n1", "x", "")}, nil, "[]", ""},
		{"three zones", []corev1.Pod{pod("n0", "x", "a"), pod("n1", "y", "b"), pod("n2", "z", "c"), pod("n3", "", "")}, nil,
			"[{a [n0]} {b [n1]} {c [n2]}]", "True"},
		{"one zone of two", []corev1.Pod{pod("n0", "x", "a"), pod("n1", "x", "a"), pod("n2", "x", "a")}, []string{"a", "b"},
			"[{a [n0 n1 n2]}]", "False"},
		{"one zone, no other", []corev1.Pod{pod("n0", "x", "a"), pod("n1", "x", "a")}, []string{"a"}, "[{a [n0 n1]}]", ""},
	} {
		obs := status.ClusterObservation{NodeZones: tc.nodeZones}
		observeZones(&obs, tc.pods)
		if got := fmt.Sprint(obs.Zones); got != tc.zones {
			t.Errorf("%s: zones %s, want %s", tc.name, got, tc.zones)
		}
		got := ""
		if obs.ZoneRedundancy != nil {
			got = string(obs.ZoneRedundancy.Status)
		}
		if got != tc.redundant {
			t.Errorf("%s: ZoneRedundant %q, want %q", tc.name, got, tc.redundant)
		}
	}
}
