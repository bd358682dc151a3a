package e2e_test

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// meshRollbackAfter is how long the suite's operator bears trouble under
// STRICT (the shipped default is a minute): short, so that a rollback
// scenario does not wait long, and still longer than a pass or two.
const meshRollbackAfter = 20 * time.Second

// meshTimeout bounds a migration: three servers replaced one at a time.
const meshTimeout = 8 * time.Minute

// istio puts a cluster in the mesh with mode mtls. The suite reads the
// servers' monitor port (/routez, /jsz) from the test process, outside
// the mesh, so its clusters ask for the monitor exception; by default
// there is none (TestPeerAuthenticationMonitorException).
func istio(mtls v1alpha1.MeshMTLSMode) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) {
		s.Mesh = &v1alpha1.MeshSpec{Istio: &v1alpha1.IstioMeshSpec{MTLS: mtls, MonitorPermissive: true}}
	}
}

// rollback sets spec.mesh.istio.rollback (after istio).
func rollback(r v1alpha1.MeshRollbackPolicy) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) { s.Mesh.Istio.Rollback = r }
}

// setMesh turns spec.mesh.istio on (mtls) or off ("-").
func setMesh(t *testing.T, f *formed, mtls v1alpha1.MeshMTLSMode) {
	t.Helper()
	c := f.Cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if mtls == "-" {
			c.Spec.Mesh = nil
		} else {
			istio(mtls)(&c.Spec)
		}
		return cluster.Client.Update(testCtx(t), c)
	})
}

// policyMode is the mode of the cluster's PeerAuthentication, "" when
// there is none.
func policyMode(t *testing.T, f *formed) (string, error) {
	return policyModeOf(t, f.NS, f.Cluster.Name)
}

// policyModeOf is the mode of the policy of cluster name in ns.
func policyModeOf(t *testing.T, ns, name string) (string, error) {
	var pa securityv1.PeerAuthentication
	err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: ns, Name: name}, &pa)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return pa.Spec.GetMtls().GetMode().String(), nil
}

// waitMeshReason waits for MeshReady's reason ("" for no condition).
func waitMeshReason(t *testing.T, f *formed, reason string, timeout time.Duration) *v1alpha1.NatsCluster {
	t.Helper()
	c := f.Cluster
	eventually(t, timeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		got := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMeshReady)
		if reason == "" && got == nil || got != nil && got.Reason == reason {
			return nil
		}
		return fmt.Errorf("MeshReady %+v, want reason %q", got, reason)
	})
	return c
}

// sidecarState is, for every server pod there is, whether it has a ready
// sidecar.
func sidecarState(t *testing.T, ns string) (map[string]bool, error) {
	var pods corev1.PodList
	if err := cluster.Client.List(testCtx(t), &pods, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range pods.Items {
		ready := false
		for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if s.Name == render.IstioProxyContainer && s.Ready {
				ready = true
			}
		}
		out[p.Name] = p.Annotations[render.AnnotationIstioStatus] != "" && ready && p.DeletionTimestamp == nil
	}
	return out, nil
}

// meshGuard samples the policy and the pods until stopped, and records
// every moment the policy was STRICT while a server lacked a ready
// sidecar: the direct path the operator must never take. With inForce it
// also looks at what each server's sidecar enforces on the route port
// (the policies istiod last pushed it, whichever PeerAuthentication they
// come from): STRICT there while a server runs without a sidecar is the
// direct path too, by a platform's wider policy or a push not yet
// arrived.
type meshGuard struct {
	stop      chan struct{}
	done      chan struct{}
	inForce   bool
	mu        sync.Mutex
	checked   bool
	samples   int
	strictAt  int
	violation []string
}

// guardMeshInForce is guardMesh that also checks the modes in force.
func guardMeshInForce(t *testing.T, f *formed) *meshGuard {
	return startGuard(t, f.NS, f.Cluster.Name, true)
}

func guardMesh(t *testing.T, f *formed) *meshGuard { return guardMeshOf(t, f.NS, f.Cluster.Name) }

// guardMeshOf guards cluster name in ns, which need not exist yet: a guard
// started before the cluster is created watches its whole way to STRICT.
func guardMeshOf(t *testing.T, ns, name string) *meshGuard {
	return startGuard(t, ns, name, false)
}

func startGuard(t *testing.T, ns, name string, inForce bool) *meshGuard {
	g := &meshGuard{stop: make(chan struct{}), done: make(chan struct{}), inForce: inForce}
	go func() {
		defer close(g.done)
		for {
			select {
			case <-g.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			// The pods first: a sidecar that is ready now was ready when
			// the policy is read an instant later.
			pods, err := sidecarState(t, ns)
			if err != nil {
				continue
			}
			mode, err := policyModeOf(t, ns, name)
			if err != nil {
				continue
			}
			enforced := g.strictInForce(t, ns)
			g.mu.Lock()
			g.samples++
			if enforced != "" && len(g.violation) < 10 {
				g.violation = append(g.violation, fmt.Sprintf("%s %s (%v)", time.Now().Format(time.StampMilli), enforced, pods))
			}
			if mode == render.MeshPolicyStrict {
				g.strictAt++
				for name, ok := range pods {
					if !ok && len(g.violation) < 10 {
						g.violation = append(g.violation, fmt.Sprintf("%s STRICT while %s had no ready sidecar (%v)", time.Now().Format(time.StampMilli), name, pods))
					}
				}
			}
			g.mu.Unlock()
		}
	}()
	// A test that fails before its check still says what the guard saw.
	t.Cleanup(func() {
		g.halt()
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.checked {
			for _, v := range g.violation {
				t.Error(v)
			}
		}
	})
	return g
}

// strictInForce names a server whose sidecar enforces STRICT on the route
// port while another server runs without a sidecar (not injected, not
// being deleted: its plaintext routes are refused); "" when none does,
// or the guard does not look.
func (g *meshGuard) strictInForce(t *testing.T, ns string) string {
	if !g.inForce {
		return ""
	}
	var pods corev1.PodList
	if err := cluster.Client.List(testCtx(t), &pods, client.InNamespace(ns)); err != nil {
		return ""
	}
	without := ""
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Annotations[render.AnnotationIstioStatus] == "" {
			without = p.Name
		}
	}
	if without == "" {
		return ""
	}
	for _, p := range pods.Items {
		if mode, ok := cluster.MeshModeInForce(ns, p.Name, render.ClusterPort); ok && mode == render.MeshPolicyStrict {
			return fmt.Sprintf("STRICT in force on %s's route port while %s runs without a sidecar", p.Name, without)
		}
	}
	return ""
}

func (g *meshGuard) halt() {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	<-g.done
}

func (g *meshGuard) check(t *testing.T) {
	t.Helper()
	g.halt()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checked = true
	if g.samples == 0 {
		t.Fatal("the mesh guard took no sample")
	}
	for _, v := range g.violation {
		t.Error(v)
	}
	t.Logf("mesh guard: %d samples, %d under STRICT, every one with every server's sidecar ready", g.samples, g.strictAt)
}

// meshOptions make a NATS client a workload of the mesh with service
// account sa of the test's namespace: mTLS to servers with a sidecar.
// Servers the cluster gossips are ignored: they are the applications'
// own addresses, which only their sidecars reach.
func meshOptions(t *testing.T, f *formed, sa string) []nats.Option {
	t.Helper()
	dial, err := cluster.MeshDialer(f.NS, sa)
	if err != nil {
		t.Fatal(err)
	}
	return []nats.Option{nats.SetCustomDialer(dialerFunc(dial)), nats.IgnoreDiscoveredServers()}
}

type dialerFunc func(network, address string) (net.Conn, error)

func (d dialerFunc) Dial(network, address string) (net.Conn, error) { return d(network, address) }
