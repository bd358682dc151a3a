package render_test

import (
	"fmt"
	"maps"
	"testing"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/kubenats/kubenats/internal/render"
)

// TestPodDisruptionBudget: one server at a time, whatever the size, which
// keeps a JetStream quorum of three or more.
func TestPodDisruptionBudget(t *testing.T) {
	for _, replicas := range []int32{1, 3, 5} {
		t.Run(fmt.Sprint(replicas, " servers"), func(t *testing.T) {
			c := cluster(withReplicas(replicas))
			pdb := find[*policyv1.PodDisruptionBudget](t, renderObjects(t, c, render.Inputs{}), "demo")
			if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.String() != "1" {
				t.Errorf("maxUnavailable = %v, want 1", pdb.Spec.MaxUnavailable)
			}
			if pdb.Spec.MinAvailable != nil {
				t.Errorf("minAvailable = %v, want unset beside maxUnavailable", pdb.Spec.MinAvailable)
			}
			if pdb.Spec.Selector == nil || !maps.Equal(pdb.Spec.Selector.MatchLabels, render.ManagedSelectorLabels(c)) {
				t.Errorf("selector = %+v, want %v", pdb.Spec.Selector, render.ManagedSelectorLabels(c))
			}
			equal(t, "apiVersion", pdb.APIVersion, "policy/v1")
			equal(t, "kind", pdb.Kind, "PodDisruptionBudget")
		})
	}
}
