package render_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/internal/render"
)

// TestServiceAccountMountsNoToken: NATS never talks to the Kubernetes API.
func TestServiceAccountMountsNoToken(t *testing.T) {
	for _, name := range []string{"demo", "other"} {
		t.Run(name, func(t *testing.T) {
			sa := find[*corev1.ServiceAccount](t, renderObjects(t, cluster(named(name)), render.Inputs{}), name)
			equal(t, "automountServiceAccountToken", ptr.Deref(sa.AutomountServiceAccountToken, true), false)
			equal(t, "kind", sa.Kind, "ServiceAccount")
			equal(t, "namespace", sa.Namespace, "ns")
		})
	}
}
