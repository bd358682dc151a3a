package e2e_test

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// TestMeshNewClusterEndsStrict (scenario 1): a new 3-server cluster with
// spec.mesh.istio starts PERMISSIVE with its sidecars and ends under
// STRICT, routes and JetStream intact; a client in the mesh connects with
// the credentials Secret, one outside the mesh is refused.
func TestMeshNewClusterEndsStrict(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	// Guarded from before it exists: a new cluster may reach STRICT by the
	// time it is Ready.
	guard := guardMeshOf(t, ns, "nats")
	f := formNamed(t, ns, "nats", istio(""))
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrict, meshTimeout)
	if mode, err := policyMode(t, f); err != nil || mode != render.MeshPolicyStrict {
		t.Fatalf("policy mode %q (%v), want STRICT", mode, err)
	}
	checkRoutes(t, f)
	checkMetaGroup(t, f)
	if n := eventsWithReason(t, f.ns, "MeshPermissive"); n == 0 {
		t.Error("no MeshPermissive event: the policy did not start PERMISSIVE")
	}
	// A pass that reads the policy from a cache not yet updated tells it
	// again: at least one.
	if n := eventsWithReason(t, f.ns, "MeshStrict"); n == 0 {
		t.Error("no MeshStrict event")
	}

	cred := credentials(t, f)
	in, err := connect(t, podURLs(f, f.pods), append(meshOptions(t, f, "app"), nats.UserInfo(cred["user"], cred["password"]))...)
	if err != nil {
		t.Fatalf("a client in the mesh with the credentials Secret: %v", err)
	}
	publishToJetStream(t, in)

	// Outside the mesh: STRICT serves only mTLS; the sidecar waits for a
	// handshake a NATS client never starts (it waits for the server's
	// INFO), and the client gives up at its connect timeout, having met
	// no server.
	began := time.Now()
	nc, err := connect(t, podURLs(f, f.pods[:1]), clusterDNS(), nats.UserInfo(cred["user"], cred["password"]))
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		nc.Close()
		t.Fatal("a client outside the mesh connected under STRICT")
	case errors.As(err, &dnsErr) || errors.Is(err, syscall.ECONNREFUSED):
		t.Fatalf("a client outside the mesh never reached the server's sidecar (%v): the refusal is not the mesh's", err)
	}
	t.Logf("a client outside the mesh: no connection, given up after %s (%v)", time.Since(began).Round(time.Millisecond), err)
	// The timeout above would pass for a policy that selects no pod (the
	// careless variant: PERMISSIVE hangs a NATS client just the same);
	// a client that speaks first is closed unanswered only under STRICT.
	checkWire(t, f, wireClosed)
	guard.check(t)
}

// TestMeshRollsBackWhenRoutesBreak (scenario 4): a spec that opts in to
// rollback: Automatic; under STRICT one proxy dies and stays down longer
// than the operator bears trouble: the operator goes back to PERMISSIVE
// by itself, with a Warning event that says why, and the cluster recovers
// once the proxy is back; it stays PERMISSIVE for this spec. (Without the
// opt-in, TestMeshReportsWhenRoutesBreak.)
func TestMeshRollsBackWhenRoutesBreak(t *testing.T) {
	// Long and mostly waiting: runs beside the other parallel tests (main_test.go).
	t.Parallel()
	f := formCluster(t, istio(""), rollback(v1alpha1.MeshRollbackAutomatic))
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrict, meshTimeout)
	killed := time.Now()
	down := meshRollbackAfter + 40*time.Second
	if err := cluster.KillProxy(f.ns, "nats-1", down); err != nil {
		t.Fatal(err)
	}
	c := waitMeshReason(t, f, v1alpha1.ReasonMeshRolledBack, down)
	rolledBack := time.Since(killed)
	if rolledBack < meshRollbackAfter {
		t.Errorf("rolled back after %s, before the bound of %s", rolledBack, meshRollbackAfter)
	}
	if mode, err := policyMode(t, f); err != nil || mode != render.MeshPolicyPermissive {
		t.Fatalf("policy mode %q (%v) after the rollback, want PERMISSIVE", mode, err)
	}
	// At the wire too, on the servers whose proxies run: a client outside
	// the mesh that speaks first is answered.
	checkWire(t, &formed{ns: f.ns, cluster: f.cluster, pods: slices.DeleteFunc(slices.Clone(f.pods), func(p string) bool { return p == "nats-1" })}, wireAnswered)
	expectWarningEvent(t, f.ns, v1alpha1.ReasonMeshRolledBack)
	cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMeshReady)
	t.Logf("MeshReady after %s: %s", rolledBack.Round(time.Second), cond.Message)

	// The proxy comes back: the cluster recovers under PERMISSIVE.
	eventually(t, down+formTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if r := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Reason != v1alpha1.ReasonReady {
			return fmt.Errorf("Ready %+v", r)
		}
		return nil
	})
	checkRoutes(t, f)
	checkMetaGroup(t, f)
	poll.Holds(t, 3*strictWatch(), func() error {
		mode, err := policyMode(t, f)
		if err != nil || mode != render.MeshPolicyPermissive {
			return fmt.Errorf("policy mode %q (%v): STRICT again without a spec change", mode, err)
		}
		return nil
	})
}

// TestMeshReportsWhenRoutesBreak: the same broken proxy, with the default
// rollback (Report): the policy stays STRICT all along, MeshReady says
// StrictUnhealthy with a Warning event, and once the proxy is back the
// cluster recovers under STRICT. On main before issue 17 the operator
// loosened the policy to PERMISSIVE after meshRollbackAfter: the sampling
// below fails there.
func TestMeshReportsWhenRoutesBreak(t *testing.T) {
	t.Parallel()
	f := formCluster(t, istio(""))
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrict, meshTimeout)
	down := meshRollbackAfter + 40*time.Second
	if err := cluster.KillProxy(f.ns, "nats-1", down); err != nil {
		t.Fatal(err)
	}
	stillStrict := func() error {
		mode, err := policyMode(t, f)
		if err != nil || mode != render.MeshPolicyStrict {
			return fmt.Errorf("policy mode %q (%v): loosened without rollback: Automatic", mode, err)
		}
		return nil
	}
	// Sampled past the bound the operator bears trouble for.
	poll.Holds(t, meshRollbackAfter+15*time.Second, stillStrict)
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrictUnhealthy, down)
	if err := stillStrict(); err != nil {
		t.Fatal(err)
	}
	expectWarningEvent(t, f.ns, v1alpha1.ReasonMeshStrictUnhealthy)
	// The proxy comes back: the cluster recovers, still STRICT.
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrict, down+formTimeout)
	if err := stillStrict(); err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, f)
	checkMetaGroup(t, f)
}

// strictWatch is how often the operator looks at a cluster under STRICT
// (controller.strictWatch), for windows that must see a few passes.
func strictWatch() time.Duration { return 10 * time.Second }
