package realnode_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/release"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/realnode"
)

// The operator's Deployment of dist/install.yaml, applied as shipped,
// becomes available on the real node: its image found under the shipped
// name, its own securityContext enforced by the kernel (read here from
// /proc), its probes answered through a real kubelet. A careless variant
// seen failing: readOnlyRootFilesystem off in the install (the root reads
// writable).
func TestOperatorDeploymentRunsAsShipped(t *testing.T) {
	needNode(t)
	pod := waitOperator(t)
	t.Logf("operator pod created to Ready: %s", readyAfter(pod).Round(10*time.Millisecond))
	if got := pod.Spec.Containers[0].Image; got != release.Image {
		t.Errorf("operator image %q, want the shipped %q", got, release.Image)
	}
	pid, err := realnode.ContainerPID(pod, "manager")
	if err != nil {
		t.Fatal(err)
	}
	checkHardened(t, pid, "the operator")
}

// The API server reaches the operator's webhook through its Service: a
// Stream naming a NatsAccount its namespace lacks is refused by the
// webhook (CEL and the admission policies cannot see other objects). The
// webhook's failure policy is Ignore, so an unreachable webhook admits it:
// the careless variant seen failing is the webhook Service's targetPort
// naming a port the container does not have (the Stream admitted for the
// whole minute).
func TestWebhookReachedThroughItsService(t *testing.T) {
	needNode(t)
	waitOperator(t)
	webhookRefusesAnOrphanStream(t, namespace(t))
}

// webhookRefusesAnOrphanStream: a Stream naming a NatsAccount ns lacks is
// refused by the operator's webhook.
func webhookRefusesAnOrphanStream(t *testing.T, ns string) {
	t.Helper()
	poll.Until(t, wait, func() error {
		s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan"}}
		s.Spec.Name = "ORPHAN"
		s.Spec.Account = "no-such-account"
		s.Spec.Cluster = &v1alpha1.ClusterRef{Name: "nats"}
		err := node.Client.Create(ctxOf(t), s, client.DryRunAll)
		if err == nil {
			return fmt.Errorf("a Stream naming a missing account was admitted")
		}
		if !strings.Contains(err.Error(), "there is no NatsAccount no-such-account") {
			return fmt.Errorf("refused, but not by the webhook: %v", err)
		}
		return nil
	})
}

// A NatsCluster with defaults forms on the real node: three servers of
// the nats:<version>-alpine image, hardened as rendered (read from /proc
// and the cgroup: user 65532, no capabilities, a seccomp filter, a
// read-only root, the memory limit with GOMEMLIMIT below it), reached by
// an application through the client Service's DNS name, resolved by the
// cluster DNS server to its ClusterIP, with TLS verifying that name; an
// R3 stream is created and written. Careless variant seen failing: the
// servers' readOnlyRootFilesystem off in render (the root reads
// writable).
func TestNatsClusterOnTheRealNode(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	c := formCluster(t, ns, "nats", nil)
	pods := &corev1.PodList{}
	if err := node.Client.List(ctxOf(t), pods, client.InNamespace(ns), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		pid, err := realnode.ContainerPID(p, render.ServerContainerName)
		if err != nil {
			t.Fatal(err)
		}
		checkHardened(t, pid, p.Name)
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != "/usr/local/bin/nats-server" {
			t.Errorf("%s runs %q (%v), want the alpine image's /usr/local/bin/nats-server", p.Name, exe, err)
		}
		limit, err := realnode.MemoryLimit(pid)
		if err != nil {
			t.Fatal(err)
		}
		want := p.Spec.Containers[0].Resources.Limits.Memory().Value()
		if limit != want {
			t.Errorf("%s: memory cgroup limit %d, want the container's %d", p.Name, limit, want)
		}
		// The zone: copied from the node onto the pod at binding (the
		// real scheduler's binding through PodTopologyLabels admission),
		// into the server's tag by the real kubelet's downward API and
		// $(VAR) expansion.
		if zone, tag := p.Labels[corev1.LabelTopologyZone], environ(t, pid, render.EnvZoneTag); zone != realnode.NodeZone || tag != `"zone:`+realnode.NodeZone+`"` {
			t.Errorf("%s: zone label %q, zone tag %s; want %s from the node", p.Name, zone, tag, realnode.NodeZone)
		}
		gomem, err := strconv.ParseInt(environ(t, pid, "GOMEMLIMIT"), 10, 64)
		if err != nil || gomem <= 0 || gomem >= limit {
			t.Errorf("%s: GOMEMLIMIT %d (%v), want below the cgroup's limit %d", p.Name, gomem, err, limit)
		}
	}
	nc := clientConn(t, c)
	js := e2ekit.AppJetStream(t, nc)
	createStream(t, js, natsjs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
	for i := range 100 {
		if _, err := js.Publish(ctxOf(t), "orders.new", []byte(strconv.Itoa(i))); err != nil {
			t.Fatalf("publishing %d: %v", i, err)
		}
	}
	s, err := js.Stream(ctxOf(t), "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if info.State.Msgs != 100 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream ORDERS: %d messages, cluster %+v; want 100 on three servers", info.State.Msgs, info.Cluster)
	}
}

// A rolling upgrade of the server version on the real node, under
// acknowledged publishing to an R3 stream: every acknowledged ID is read
// back, and each server is replaced exactly once (counted by pod UIDs)
// through the real kubelet's probes and preStop hook.
func TestRollingUpgradeKeepsEveryAcknowledgedMessage(t *testing.T) {
	needNode(t)
	waitOperator(t)
	const from, to = "2.14.10", "2.15.3"
	ns := namespace(t)
	c := formCluster(t, ns, "up", func(s *v1alpha1.NatsClusterSpec) { s.Version = from })
	uids := watchPodUIDs(t, ns)
	nc := clientConn(t, c)
	js := e2ekit.AppJetStream(t, nc)
	createStream(t, js, natsjs.StreamConfig{Name: "EVENTS", Subjects: []string{"events"}, Replicas: 3})
	pub := e2ekit.StartPublisher(js, "events")
	defer pub.Halt()
	poll.Until(t, wait, func() error {
		if n := pub.Count(); n < 50 {
			return fmt.Errorf("%d acknowledged", n)
		}
		return nil
	})
	began := time.Now()
	if err := node.Client.Patch(ctxOf(t), c, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"`+to+`"}}`))); err != nil {
		t.Fatal(err)
	}
	waitClusterReady(t, c, func(pods []corev1.Pod) error {
		if c.Status.ServerVersion != to {
			return fmt.Errorf("status.serverVersion %q", c.Status.ServerVersion)
		}
		for _, p := range pods {
			if img := p.Spec.Containers[0].Image; img != "nats:"+to+"-alpine" {
				return fmt.Errorf("pod %s runs %s", p.Name, img)
			}
		}
		return nil
	})
	t.Logf("upgraded %s -> %s in %s", from, to, time.Since(began).Round(100*time.Millisecond))
	after := pub.Count()
	poll.Until(t, wait, func() error {
		if n := pub.Count(); n < after+50 {
			return fmt.Errorf("%d acknowledged, %d at the end of the rollout", n, after)
		}
		return nil
	})
	pub.Halt()
	acked, stall := pub.Result()
	t.Logf("%d messages acknowledged, the longest wait for one %s", acked, stall.Round(time.Millisecond))
	stored := e2ekit.StoredCount(t, js, "EVENTS", acked, nil)
	e2ekit.CheckEveryIDStored(t, js, "EVENTS", acked, stored, nil)
	for _, name := range e2ekit.PodNames("up", 3) {
		if n := len(uids.of(name)); n != 2 {
			t.Errorf("pod %s had %d incarnations (%v), want 2: replaced exactly once", name, n, uids.of(name))
		}
	}
}

// podUIDs records every UID each pod name of a namespace had.
type podUIDs struct {
	mu   sync.Mutex
	seen map[string][]types.UID
}

func (u *podUIDs) of(name string) []types.UID {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]types.UID(nil), u.seen[name]...)
}

// watchPodUIDs watches ns's pods from now on, the current ones included.
func watchPodUIDs(t *testing.T, ns string) *podUIDs {
	t.Helper()
	u := &podUIDs{seen: map[string][]types.UID{}}
	w, err := node.Kubernetes.CoreV1().Pods(ns).Watch(ctxOf(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			u.mu.Lock()
			list := u.seen[p.Name]
			if len(list) == 0 || list[len(list)-1] != p.UID {
				u.seen[p.Name] = append(list, p.UID)
			}
			u.mu.Unlock()
		}
	}()
	return u
}

// A NatsCluster deleted (with kubenats.io/delete-with-data, as its stream
// holds messages) with its claims retained (the default policy), then
// made again under the same name, finds its data: the local volumes the
// kubelet mounted keep the stream, and the new servers bind the same
// claims. Careless variant seen failing: pvcRetentionPolicy Delete in
// render (the claims go with the StatefulSet).
func TestRetainedClaimsKeepTheStream(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	c := formCluster(t, ns, "keep", nil)
	js := e2ekit.AppJetStream(t, clientConn(t, c))
	createStream(t, js, natsjs.StreamConfig{Name: "KEPT", Subjects: []string{"kept"}, Replicas: 3})
	for i := range 20 {
		if _, err := js.Publish(ctxOf(t), "kept", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	claims := func() (*corev1.PersistentVolumeClaimList, error) {
		l := &corev1.PersistentVolumeClaimList{}
		return l, node.Client.List(ctxOf(t), l, client.InNamespace(ns))
	}
	before, err := claims()
	if err != nil || len(before.Items) != 3 {
		t.Fatalf("%d claims (%v), want 3", len(before.Items), err)
	}
	// The operator keeps a deleted NatsCluster whose streams hold
	// messages unless told to let it go with them (plan's deletion guard);
	// the claims are what keeps the data then.
	if err := node.Client.Patch(ctxOf(t), c, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+plan.AnnotationDeleteWithData+`":"true"}}}`))); err != nil {
		t.Fatal(err)
	}
	if err := node.Client.Delete(ctxOf(t), c); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := node.Client.List(ctxOf(t), pods, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(c), &v1alpha1.NatsCluster{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the NatsCluster is still there (%v)", err)
		}
		return nil
	})
	// The garbage collector would delete the claims within moments of the
	// StatefulSet: they must stay over a window.
	window := time.Now().Add(5 * time.Second)
	for time.Now().Before(window) {
		after, err := claims()
		if err != nil {
			t.Fatal(err)
		}
		if len(after.Items) != 3 {
			t.Fatalf("%d claims after the NatsCluster was deleted, want the 3 retained", len(after.Items))
		}
		time.Sleep(500 * time.Millisecond)
	}
	again := formCluster(t, ns, "keep", nil)
	js = e2ekit.AppJetStream(t, clientConn(t, again))
	poll.Until(t, wait, func() error {
		s, err := js.Stream(ctxOf(t), "KEPT")
		if err != nil {
			return err
		}
		if n := s.CachedInfo().State.Msgs; n != 20 {
			return fmt.Errorf("stream KEPT holds %d messages, want the 20 written before", n)
		}
		return nil
	})
	after, err := claims()
	if err != nil {
		t.Fatal(err)
	}
	for i := range after.Items {
		if after.Items[i].UID != before.Items[i].UID {
			t.Errorf("claim %s was made anew", after.Items[i].Name)
		}
	}
}

// createStream creates the stream, again while it fails: a new meta
// leader learns its peers' state a moment after it is elected (placement
// answers "no suitable peers" or times out meanwhile, as the e2e suite
// knows too), and the same config again is fine if a timed-out create
// went through.
func createStream(t *testing.T, js natsjs.JetStream, cfg natsjs.StreamConfig) {
	t.Helper()
	poll.Until(t, wait, func() error {
		_, err := js.CreateStream(ctxOf(t), cfg)
		return err
	})
}
