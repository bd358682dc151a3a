package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/rbac"
)

// meshPushDelay bounds how long a push of istiod's takes to reach a
// proxy in the migration: longer than a new server takes to turn ready,
// so its peers know its sidecar only after it serves.
const meshPushDelay = 6 * time.Second

// meshPushAllowance is what the suite's operator gives istiod to push a
// policy change to every sidecar: more than meshPushDelay.
const meshPushAllowance = meshPushDelay + 2*time.Second

// TestMeshExistingClusterInAndOutUnderLoad (scenarios 2, 3's gate and 5):
// a cluster running without sidecars, under continuous acknowledged
// publishing with message IDs from a client in the mesh, has the flag
// turned on: PERMISSIVE first, the servers rolled one at a time, STRICT
// at the end, never STRICT while a server lacks a ready sidecar (the
// direct path, which breaks routes, see the loopback model's tests). Then
// the flag goes off again: back to servers without sidecars, no policy
// left. Every acknowledged ID is read back; the longest stall is reported.
// All of it under a platform's mesh-wide STRICT policy, which only the
// operator's own PERMISSIVE policy keeps off the servers while some lack
// a sidecar, and with istiod's pushes seconds late (meshPushDelay): a
// new server's peers, the client and the operator learn of its sidecar,
// and every sidecar of a policy change, well after the fact. The guard
// checks the modes each sidecar enforces as well as the policy object.
// Seen failing against two careless operators: one that renders its
// PERMISSIVE stage as mode UNSET ("PERMISSIVE is Istio's default"),
// which passes without the mesh-wide policy: the meshed servers inherited
// STRICT, refused each other's plaintext routes, the rollout waited for
// them until meshTimeout, and the guard saw STRICT in force on nats-2's
// route port while nats-1 ran without a sidecar; and the operator as it
// was, taking the sidecars away as soon as its policy object read
// PERMISSIVE: a server without a sidecar started (lame duck ends at once
// here, with few clients) while a peer's sidecar still enforced STRICT.
func TestMeshExistingClusterInAndOutUnderLoad(t *testing.T) {
	f := formCluster(t)
	// A client in the mesh: while one server lacks a sidecar its sidecar
	// sends plaintext to all of them (auto mTLS toward a headless Service
	// is all or nothing), which hangs it on a meshed PERMISSIVE server
	// (NATS speaks first) until it reconnects to one without a sidecar;
	// once every server has one, and the push says so, mTLS to all. One
	// outside the mesh would hang on every PERMISSIVE server.
	pub, js, stream := startPublishing(t, f, meshOptions(t, f, "app")...)
	defer pub.Halt()
	ackedAtLeast := func(n int) {
		t.Helper()
		eventually(t, upgradeTimeout, func() error {
			if got := pub.Count(); got < n {
				return fmt.Errorf("%d messages acknowledged, waiting for %d", got, n)
			}
			return nil
		})
	}
	ackedAtLeast(100)
	guard := guardMeshInForce(t, f)
	// The platform is STRICT mesh-wide, and istiod slow: the servers, the
	// publishing client and the operator learn of each new sidecar, and
	// of each policy change, seconds after the fact, each in its own time.
	meshWideStrict(t)
	slowPushes(t, meshPushDelay, f.NS, rbac.Namespace)

	began := time.Now()
	setMesh(t, f, "")
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrict, meshTimeout)
	in := time.Since(began)
	if mode, err := policyMode(t, f); err != nil || mode != render.MeshPolicyStrict {
		t.Fatalf("policy mode %q (%v), want STRICT", mode, err)
	}
	pods, err := sidecarState(t, f.NS)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range f.Pods {
		if !pods[name] {
			t.Errorf("server %s has no ready sidecar under STRICT (%v)", name, pods)
		}
	}
	checkRoutes(t, f)
	// STRICT at the wire, not only in the policy object: a client outside
	// the mesh that speaks first is closed unanswered on every server.
	checkWire(t, f, wireClosed)
	ackedAtLeast(pub.Count() + 100)
	// A pass that reads the StatefulSet from a cache not yet updated tells
	// it again: at least one.
	if n := eventsWithReason(t, f.NS, "MeshSidecars"); n == 0 {
		t.Error("no MeshSidecars event")
	}
	t.Logf("into the mesh: STRICT %s after the flag", in.Round(time.Second))

	began = time.Now()
	setMesh(t, f, "-")
	waitMeshReason(t, f, "", meshTimeout)
	eventually(t, meshTimeout, func() error {
		pods, err := sidecarState(t, f.NS)
		if err != nil {
			return err
		}
		var list corev1.PodList
		if err := cluster.Client.List(testCtx(t), &list, client.InNamespace(f.NS)); err != nil {
			return err
		}
		for _, p := range list.Items {
			if p.Annotations[render.AnnotationIstioStatus] != "" {
				return fmt.Errorf("server %s still has a sidecar (%v)", p.Name, pods)
			}
		}
		if mode, err := policyMode(t, f); err != nil || mode != "" {
			return fmt.Errorf("policy %q (%v) still there", mode, err)
		}
		return nil
	})
	t.Logf("out of the mesh: no sidecar and no policy %s after the flag", time.Since(began).Round(time.Second))
	checkRoutes(t, f)
	checkWire(t, f, wireAnswered)
	ackedAtLeast(pub.Count() + 100)
	pub.Halt()
	guard.check(t)
	acked, stall := pub.Result()
	checkEveryIDStored(t, js, acked, storedCount(t, js, stream, acked))
	t.Logf("into the mesh and out under load: %d messages acknowledged, none lost; longest publish stall %s", acked, stall.Round(time.Millisecond))
}
