package loopback

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The mesh model's documented behaviours, with real nats-servers run by
// the kubelet as pods that Istio's injector changed, and policies from
// PeerAuthentications in the API server.

// TestIstioPolicyThroughTheKubelet: two injected servers. PERMISSIVE hangs
// a plaintext NATS client (the server speaks first) and serves a meshed
// one; a server outside the mesh routes to them in plaintext. STRICT
// refuses the plaintext client and the outside server's route, while the
// meshed servers keep their route (mTLS between sidecars) and stay ready
// (their probes go to the agent, which no policy applies to). A killed
// proxy cuts its pod off and turns it unready until the kubelet restarts
// it.
func TestIstioPolicyThroughTheKubelet(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns := meshNamespace(t, c, "mesh-policy")
	must(t, c.Client.Create(ctx, meshStatefulSet(ns, 2, true)))
	outsider := meshStatefulSet(ns, 1, false)
	outsider.Name, outsider.Spec.ServiceName = "outsider", "outsider"
	outsider.Spec.Selector.MatchLabels = map[string]string{"app": "outsider"}
	outsider.Spec.Template.Labels = map[string]string{"app": "outsider"}
	outsider.Spec.Template.Spec.Volumes[0].ConfigMap.Name = "outsider-config"
	must(t, c.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "outsider-config"}, Data: map[string]string{"nats.conf": strings.Replace(meshConf,
		`routes: ["nats://nats-0.nats:6222", "nats://nats-1.nats:6222", "nats://nats-2.nats:6222"]`, `routes: ["nats://nats-0.nats:6222"]`, 1)}}))
	must(t, c.Client.Create(ctx, outsider))
	readyPod(t, c, ns, "nats-0", 0)
	readyPod(t, c, ns, "nats-1", 0)
	readyPod(t, c, ns, "outsider-0", 0)
	servers := []string{"nats-0", "nats-1", "outsider-0"}
	eventuallyServerRoutes(t, c, ns, servers, map[string][]string{
		"nats-0": {"nats-1", "outsider-0"}, "nats-1": {"nats-0"}, "outsider-0": {"nats-0"}})

	addr := c.PodIP(ns, "nats-0") + ":4222"
	if line, err := firstLine(addr, "", silenceWindow); line != "" {
		t.Fatalf("a plaintext client got %q (%v) from a PERMISSIVE port: it must hang", line, err)
	}
	assertMeshedRoundTrip(t, c, addr)

	setPeerAuthentication(t, c, ns, "STRICT", nil)
	waitMode(t, c, ns, "nats-0", 4222, ModeStrict)
	if line, err := firstLine(addr, "PING\r\n", silenceWindow); line != "" || !closedByPeer(err) {
		t.Fatalf("a plaintext client under STRICT: %q, %v; want the connection closed unserved", line, err)
	}
	if _, err := nats.Connect("nats://"+addr, nats.SetCustomDialer(dialerFunc(c.Dial)), nats.NoReconnect(), nats.Timeout(2*time.Second)); err == nil {
		t.Fatal("a NATS client outside the mesh connected under STRICT")
	}
	assertMeshedRoundTrip(t, c, addr)
	strict := map[string][]string{"nats-0": {"nats-1"}, "nats-1": {"nats-0"}, "outsider-0": nil}
	eventuallyServerRoutes(t, c, ns, servers, strict)
	holdServerRoutes(t, c, ns, servers, strict)
	for _, name := range []string{"nats-0", "nats-1"} {
		if pod := getPod(t, c, ns, name); !PodReady(pod) {
			t.Errorf("%s not ready under STRICT: its probes must go through the agent", name)
		}
	}

	// A crashed proxy: its pod is cut off (no route, no client) and
	// unready until the kubelet restarts the proxy.
	must(t, c.KillProxy(ns, "nats-1", 8*time.Second))
	eventuallyServerRoutes(t, c, ns, []string{"nats-0", "nats-1"}, map[string][]string{"nats-0": nil, "nats-1": nil})
	eventually(t, func() error {
		if pod := getPod(t, c, ns, "nats-1"); PodReady(pod) {
			return fmt.Errorf("nats-1 still ready with its proxy down")
		}
		return nil
	})
	eventuallyServerRoutes(t, c, ns, []string{"nats-0", "nats-1"}, map[string][]string{"nats-0": {"nats-1"}, "nats-1": {"nats-0"}})
	pod := readyPod(t, c, ns, "nats-1", 0)
	for _, cs := range pod.Status.InitContainerStatuses {
		if cs.Name == istioProxyContainer && (cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil) {
			t.Errorf("istio-proxy after the crash: restarts %d, last %+v; want 1 and the crash", cs.RestartCount, cs.LastTerminationState)
		}
	}
}

// TestIstioStraightToStrictBreaksMixedCluster: a three-server cluster
// being given sidecars by a rolling update (partition 1: nats-1 and
// nats-2 recreated with them, nats-0 not yet) keeps every route under
// PERMISSIVE; switched straight to STRICT it loses the routes between the
// meshed servers, whose sidecars send plaintext to every pod of a headless
// Service with one pod outside the mesh, and the unmeshed server's dials
// to the meshed ones; only the meshed servers' routes to nats-0 are left.
// Back to PERMISSIVE, it heals.
func TestIstioStraightToStrictBreaksMixedCluster(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns := meshNamespace(t, c, "mesh-mixed")
	sts := meshStatefulSet(ns, 3, false)
	must(t, c.Client.Create(ctx, sts))
	servers := []string{"nats-0", "nats-1", "nats-2"}
	full := map[string][]string{"nats-0": {"nats-1", "nats-2"}, "nats-1": {"nats-0", "nats-2"}, "nats-2": {"nats-0", "nats-1"}}
	eventuallyServerRoutes(t, c, ns, servers, full)

	must(t, c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "nats"}, sts))
	sts.Spec.Template.Labels["sidecar.istio.io/inject"] = "true"
	sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}
	must(t, c.Client.Update(ctx, sts))
	eventually(t, func() error {
		for _, name := range []string{"nats-1", "nats-2"} {
			if !c.Mesh.Meshed(types.NamespacedName{Namespace: ns, Name: name}) || !PodReady(getPod(t, c, ns, name)) {
				return fmt.Errorf("%s has no ready sidecar yet", name)
			}
		}
		return nil
	})
	if c.Mesh.Meshed(types.NamespacedName{Namespace: ns, Name: "nats-0"}) {
		t.Fatal("nats-0 was given a sidecar: the partition keeps it as it was")
	}
	eventuallyServerRoutes(t, c, ns, servers, full)

	setPeerAuthentication(t, c, ns, "STRICT", nil)
	broken := map[string][]string{"nats-0": {"nats-1", "nats-2"}, "nats-1": {"nats-0"}, "nats-2": {"nats-0"}}
	eventuallyServerRoutes(t, c, ns, servers, broken)
	holdServerRoutes(t, c, ns, servers, broken)

	setPeerAuthentication(t, c, ns, "PERMISSIVE", nil)
	eventuallyServerRoutes(t, c, ns, servers, full)
}

// serverIP is where a pod's server answers its monitor port from inside
// the pod: the app address behind a sidecar.
func serverIP(c *Cluster, ns, pod string) string {
	if c.Mesh != nil && c.Mesh.Meshed(types.NamespacedName{Namespace: ns, Name: pod}) {
		return c.Mesh.AppIP(ns, pod)
	}
	return c.PodIP(ns, pod)
}

func serverRoutes(c *Cluster, ns string, pods []string) map[string][]string {
	got := map[string][]string{}
	for _, p := range pods {
		names, err := routesOf(serverIP(c, ns, p))
		if err != nil {
			names = []string{"error: " + err.Error()}
		}
		got[p] = names
	}
	return got
}

func eventuallyServerRoutes(t *testing.T, c *Cluster, ns string, pods []string, want map[string][]string) {
	t.Helper()
	eventually(t, func() error {
		if got := serverRoutes(c, ns, pods); !equalRoutes(got, want) {
			return fmt.Errorf("routes %v, want %v", got, want)
		}
		return nil
	})
}

// holdServerRoutes: the routes stay as they are over the silence window
// (the servers keep retrying, the sidecars keep refusing).
func holdServerRoutes(t *testing.T, c *Cluster, ns string, pods []string, want map[string][]string) {
	t.Helper()
	for end := time.Now().Add(silenceWindow); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got := serverRoutes(c, ns, pods); !equalRoutes(got, want) {
			t.Fatalf("routes %v, want them to stay %v", got, want)
		}
	}
}

// assertMeshedRoundTrip: a meshed client of the test process publishes
// and receives through the server's sidecar.
func assertMeshedRoundTrip(t *testing.T, c *Cluster, addr string) {
	t.Helper()
	nc, err := meshedNATS(t, c, "nats://"+addr)
	if err != nil {
		t.Fatalf("meshed client: %v", err)
	}
	assertRoundTrip(t, nc)
}

func getPod(t *testing.T, c *Cluster, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	must(t, c.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, pod))
	return pod
}
