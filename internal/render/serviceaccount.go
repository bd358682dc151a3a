package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ServiceAccount of the servers. NATS never talks to the Kubernetes API, so
// no token is mounted.
func ServiceAccount(c *v1alpha1.NatsCluster) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:                     typeMeta("v1", "ServiceAccount"),
		ObjectMeta:                   objectMeta(c, c.Name),
		AutomountServiceAccountToken: ptr.To(false),
	}
}
