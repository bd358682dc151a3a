package loopback

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestIstioMeshAndNamespaceWideStrict: a platform's mesh-wide STRICT (a
// policy without selector in istio-system) and namespace-wide STRICT
// apply to a meshed server that no policy of its own selects, and a
// workload's own policy beats both, as Istio's precedence has it. Seen
// failing against the careless model that applies only selective
// policies: the first probe was answered with INFO.
//
// Not parallel: the mesh-wide STRICT applies to every meshed pod of the
// shared cluster, so it runs first, alone, and is gone before the other
// tests' pods run.
func TestIstioMeshAndNamespaceWideStrict(t *testing.T) {
	c := sharedCluster(t)
	ctx := context.Background()
	ns := meshNamespace(t, c, "mesh-wide")
	must(t, c.Client.Create(ctx, meshStatefulSet(ns, 1, true)))
	readyPod(t, c, ns, "nats-0", 0)
	addr := c.PodIP(ns, "nats-0") + ":4222"
	probe := func(want string) {
		t.Helper()
		eventually(t, func() error {
			line, err := firstLine(addr, "PING\r\n", silenceWindow)
			switch {
			case want == "answered" && strings.HasPrefix(line, "INFO "):
				return nil
			case want == "closed" && line == "" && closedByPeer(err):
				return nil
			}
			return fmt.Errorf("a client outside the mesh that speaks first: %q, %v; want %s", line, err, want)
		})
	}
	meshWide := widePolicy(IstioNamespace, "mesh-wide-strict", "STRICT")
	must(t, c.Client.Create(ctx, meshWide))
	t.Cleanup(func() { _ = c.Client.Delete(context.Background(), meshWide) })
	probe("closed")
	assertMeshedRoundTrip(t, c, addr)

	namespaceWide := widePolicy(ns, "namespace-permissive", "PERMISSIVE")
	must(t, c.Client.Create(ctx, namespaceWide))
	probe("answered") // the namespace beats the mesh

	must(t, c.Client.Delete(ctx, namespaceWide))
	must(t, c.Client.Delete(ctx, meshWide))
	probe("answered") // nothing: PERMISSIVE
	must(t, c.Client.Create(ctx, widePolicy(ns, "namespace-strict", "STRICT")))
	probe("closed")
	setPeerAuthentication(t, c, ns, "PERMISSIVE", nil)
	probe("answered") // the workload beats the namespace
}

// widePolicy is a PeerAuthentication without selector: namespace-wide,
// or mesh-wide in Istio's root namespace.
func widePolicy(ns, name, mode string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"mtls": map[string]any{"mode": mode}},
	}}
}
