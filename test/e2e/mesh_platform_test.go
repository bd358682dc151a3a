package e2e_test

import (
	"context"
	"testing"
	"time"

	securityapi "istio.io/api/security/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/test/loopback"
)

// What a platform's mesh is like beyond one NatsCluster's policy: STRICT
// mesh-wide (a policy without selector in Istio's root namespace, a
// common default), and istiod pushing each change to the proxies seconds
// later rather than at once.

// meshWideStrict makes the whole mesh STRICT until the test ends. Only a
// workload's own policy (the operator's) loosens it for its pods.
func meshWideStrict(t *testing.T) {
	t.Helper()
	pa := &securityv1.PeerAuthentication{ObjectMeta: metav1.ObjectMeta{Namespace: loopback.IstioNamespace, Name: "mesh-wide-strict"},
		Spec: securityapi.PeerAuthentication{Mtls: &securityapi.PeerAuthentication_MutualTLS{Mode: securityapi.PeerAuthentication_MutualTLS_STRICT}}}
	if err := cluster.Client.Create(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Client.Delete(context.Background(), pa); err != nil {
			t.Errorf("removing the mesh-wide policy: %v", err)
		}
	})
}

// slowPushes makes istiod's pushes to the proxies of the namespaces take
// between d/2 and d each, until the test ends: a new pod's peers learn of
// it, and every proxy of a policy change, each in its own time.
func slowPushes(t *testing.T, d time.Duration, namespaces ...string) {
	t.Helper()
	for _, ns := range namespaces {
		cluster.Mesh.SetPushDelay(ns, d)
	}
	t.Cleanup(func() {
		for _, ns := range namespaces {
			cluster.Mesh.SetPushDelay(ns, 0)
		}
	})
}
