package e2e_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	securityapi "istio.io/api/security/v1beta1"
	typeapi "istio.io/api/type/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestMeshDirectPathBreaksTheClusterAndTheGateNeverTakesIt (scenario 3):
// the direct path, STRICT in force before every sidecar is in, is taken
// here by a policy of the user's that selects the servers and, older than
// the operator's, wins in Istio's precedence. As the sidecars roll in, two
// meshed servers lose the route between them (the unmeshed one makes the
// headless Service plaintext for everyone, which STRICT refuses), while
// the operator's own policy never goes STRICT with a server lacking its
// sidecar. With the user's policy gone, the cluster heals and the
// operator takes it to STRICT itself.
func TestMeshDirectPathBreaksTheClusterAndTheGateNeverTakesIt(t *testing.T) {
	// Long and mostly waiting: runs beside the other parallel tests (main_test.go).
	e2ekit.Parallel(t, 50*time.Second)
	f := formCluster(t)
	direct := &securityv1.PeerAuthentication{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "direct-path"},
		Spec: securityapi.PeerAuthentication{
			Selector: &typeapi.WorkloadSelector{MatchLabels: render.SelectorLabels(f.Cluster)},
			Mtls:     &securityapi.PeerAuthentication_MutualTLS{Mode: securityapi.PeerAuthentication_MutualTLS_STRICT},
			// The monitor port as the suite's clusters ask for it
			// (monitorPermissive), for the test's own /routez.
			PortLevelMtls: map[uint32]*securityapi.PeerAuthentication_MutualTLS{
				render.MonitorPort: {Mode: securityapi.PeerAuthentication_MutualTLS_PERMISSIVE},
			},
		}}
	if err := cluster.Client.Create(testCtx(t), direct); err != nil {
		t.Fatal(err)
	}
	// Creation times have a resolution of a second: the operator's policy
	// must be younger for the user's to win.
	eventually(t, wait, func() error {
		if !time.Now().Truncate(time.Second).After(direct.CreationTimestamp.Time) {
			return fmt.Errorf("still the second the user's policy was created in")
		}
		return nil
	})
	guard := guardMesh(t, f)
	broken := watchMeshedRoutes(t, f)
	setMesh(t, f, "")

	eventually(t, meshTimeout, func() error {
		if b := broken.seen(); b != "" {
			return nil
		}
		return fmt.Errorf("no meshed pair of servers without a route yet")
	})
	t.Logf("the direct path in the model: %s", broken.seen())
	if mode, err := policyMode(t, f); err != nil || mode == render.MeshPolicyStrict {
		t.Errorf("the operator's policy is %q (%v) in a half-meshed cluster", mode, err)
	}

	if err := cluster.Client.Delete(testCtx(t), direct); err != nil {
		t.Fatal(err)
	}
	waitMeshReason(t, f, v1alpha1.ReasonMeshStrict, meshTimeout)
	broken.halt()
	checkRoutes(t, f)
	checkMetaGroup(t, f)
	guard.check(t)
}

// meshedRoutes watches, while some servers have a ready sidecar and some
// do not, for two meshed servers without a route between them.
type meshedRoutes struct {
	stop, done chan struct{}
	mu         sync.Mutex
	first      string
}

func watchMeshedRoutes(t *testing.T, f *formed) *meshedRoutes {
	w := &meshedRoutes{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			pods, err := sidecarState(t, f.NS)
			if err != nil || len(pods) < len(f.Pods) {
				continue
			}
			var meshed []string
			for _, name := range slices.Sorted(maps.Keys(pods)) {
				if pods[name] {
					meshed = append(meshed, name)
				}
			}
			if len(meshed) < 2 || len(meshed) == len(pods) {
				continue
			}
			for i, a := range meshed {
				var r routez
				if err := monitor(f.IP(a), "/routez", &r); err != nil {
					continue
				}
				for _, b := range meshed[i+1:] {
					if !routesTo(r, b) {
						w.mu.Lock()
						if w.first == "" {
							w.first = fmt.Sprintf("%s has no route to %s, both with a ready sidecar, while %v", a, b, pods)
						}
						w.mu.Unlock()
					}
				}
			}
		}
	}()
	t.Cleanup(w.halt)
	return w
}

func routesTo(r routez, server string) bool {
	for _, route := range r.Routes {
		if route.RemoteName == server {
			return true
		}
	}
	return false
}

func (w *meshedRoutes) seen() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

func (w *meshedRoutes) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}
