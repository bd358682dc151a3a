package render

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// PodDisruptionBudget lets voluntary disruptions take one server at a time,
// which keeps a JetStream quorum of three or more.
func PodDisruptionBudget(c *v1alpha1.NatsCluster) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta("policy/v1", "PodDisruptionBudget"),
		ObjectMeta: objectMeta(c, c.PodDisruptionBudgetName()),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: ManagedSelectorLabels(c)},
		},
	}
}
