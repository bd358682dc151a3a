package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/convert"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/upstream"
)

// TestTakeOverAChartRelease: the official chart's rendering of a
// three-server JetStream release runs, a client publishes to an R3 stream
// with message IDs through the chart's Service and a worker acknowledges
// from a durable consumer; then the NatsCluster `kubenats convert` makes
// of the release, with spec.takeover, takes it over. The chart's
// StatefulSet is released (pods kept), its servers are replaced one at a
// time with routes still open as the chart's, then the routes close
// (password and mutual TLS) all at once. Every acknowledged ID is read
// back, the consumer's ack floor is kept (and catches up), the stream keeps three
// replicas, each server kept its claim (same UID) and its name, and no
// server of the chart runs at the end. The replacement of the chart's
// servers kept to the gate (e2ekit.CheckRollGate, from the pods' watch and
// a record of the meta leader): never two servers down at once, the meta
// leader only as the last one left, the publisher's longest stall in it
// bounded; and the meta group is whole at the end.
//
// Careless variants it catches: routes closed while one of the chart's
// servers still runs (the cluster splits: the publisher stalls past its
// bound and the meta group loses a server; plan.TakeoverPhase's table has
// the variant); the StatefulSet deleted with its pods (every pod replaced
// at once: the UID count per name is then not 3, the first of which is
// the chart's); new claims instead of the chart's (the claim UIDs change,
// the stream's messages would be gone from the new servers). Run: every
// outdated server deleted in one pass of the rollout (the chart's three
// went at once; the gate failed it: "3 servers down at once ([nats-0
// nats-1 nats-2]), 2.413s after the roll began").
// chartRollStall bounds the publisher's stall while the chart's servers
// are replaced. When the last of them holds the meta and stream leaders
// and the publisher's connection, its lame duck hands the leaders to a
// kubenats server at once, and from then it answers the publisher's
// publishes with no responders ("no response from stream", seen in the
// client) until its grace period ends and it closes its clients, the
// stall then being the grace and a reconnect (12 s, twice in three runs
// with the publisher placed there; in the third the meta leader had moved
// before). nats-server 2.14.10 in a plain cluster
// of three, the leaders and a publisher on the lame duck, keeps serving
// it (a 2 s stall, at the grace's end); why the new leader's interest does
// not reach the chart's server here is not found. With the publisher on
// any other server the stall stays under e2ekit.MaxRollStall.
const chartRollStall = e2ekit.MaxRollStall + render.LameDuckGracePeriod

func TestTakeOverAChartRelease(t *testing.T) {
	e2ekit.Parallel(t, 90*time.Second)
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	pods := recordPods(t, ns)
	installChart(t, ns)
	names := podNames("nats", 3)
	pods.seen(t, names)
	claims := claimUIDs(t, ns, names)

	nc, err := nats.Connect("nats://nats."+ns+".svc:4222", nats.Name("chart-client"), clusterDNS(),
		nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js := appJetStream(t, nc)
	var stream natsjs.Stream
	eventually(t, wait, func() error {
		stream, err = js.CreateStream(testCtx(t), natsjs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
		return err
	})
	cons, err := stream.CreateOrUpdateConsumer(testCtx(t), natsjs.ConsumerConfig{Durable: "billing", AckPolicy: natsjs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	pub := e2ekit.StartPublisher(js, "orders.new")
	defer pub.Halt()
	w := &worker{cons: cons, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	defer w.halt()
	ackedAtLeast := func(n int) {
		eventually(t, upgradeTimeout, func() error {
			if got := pub.Count(); got < n {
				return fmt.Errorf("%d messages acknowledged, waiting for %d", got, n)
			}
			return nil
		})
	}
	ackedAtLeast(100)
	eventually(t, wait, func() error {
		if w.count() == 0 {
			return fmt.Errorf("the worker has acknowledged nothing yet")
		}
		return nil
	})
	before, err := cons.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	floorBefore := before.AckFloor.Stream
	servers := &formed{NS: ns, Pods: names}
	leaders := e2ekit.WatchMetaLeader(t, func() []string { return servers.IPs(names) })

	began := time.Now()
	c := takeoverCluster(t, ns)
	if err := cluster.Client.Create(testCtx(t), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*upgradeTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		phase := v1alpha1.TakeoverPhase("")
		if c.Status.Takeover != nil {
			phase = c.Status.Takeover.Phase
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if phase != v1alpha1.TakeoverComplete || ready == nil || ready.Status != metav1.ConditionTrue || c.Status.ObservedGeneration != c.Generation {
			return fmt.Errorf("takeover %q, Ready %+v", phase, ready)
		}
		return nil
	})
	t.Logf("taken over in %s", time.Since(began).Round(time.Millisecond))
	ackedAtLeast(pub.Count() + 100) // publishing goes on after the takeover

	// One replacement per step: the chart's pod, kubenats' with open
	// routes, kubenats' with closed ones.
	for _, name := range names {
		if n := len(pods.uids(name)); n != 3 {
			t.Errorf("%s has had %d pods, want 3 (the chart's, then one per step)", name, n)
		}
	}
	checkTakenOver(t, c, names, claims)
	checkRoutePorts(t, &formed{NS: ns, Cluster: c, Pods: names}, true)

	pub.Halt()
	w.halt()
	acked, stall := pub.Result()
	// The chart's servers are replaced one at a time, gated; the routes
	// then close with every server restarted at once (by design: a server
	// with closed routes and one with open ones cannot route to each
	// other), from the first deletion of a server of the cluster's own.
	var closing time.Time
	if dels := pods.deletions(); len(dels) > len(names) {
		closing = dels[len(dels)-len(names)].at
	}
	order := e2ekit.CheckRollGate(t, pods.PodHistory, leaders, names, began, closing, pub.StallBetween(began, closing), chartRollStall)
	t.Logf("the chart's servers replaced in the order %v, the routes closed from %s on (meta leader changes:%s); longest stall while replacing %s",
		order, closing.Sub(began).Round(time.Millisecond), leaders.Changes(began), pub.StallBetween(began, closing).Round(time.Millisecond))
	e2ekit.CheckMetaGroupWhole(t, servers.Servers(), len(names))
	stored := storedCount(t, js, stream, acked)
	checkEveryIDStoredIn(t, js, "ORDERS", acked, stored)
	info, err := stream.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Errorf("the stream has %d replicas (%+v), want 3", info.Config.Replicas, info.Cluster)
	}
	// The floor the consumer had reached before the takeover is kept, and
	// it catches up with every stored message afterwards.
	ci, err := cons.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if ci.AckFloor.Stream < floorBefore {
		t.Errorf("the consumer's ack floor went back from %d to %d", floorBefore, ci.AckFloor.Stream)
	}
	consumerCaughtUp(t, cons, stored)
	t.Logf("chart release taken over under load: %d messages acknowledged, none lost; consumer ack floor %d before, %d after, then all %d; longest publish stall %s",
		acked, floorBefore, ci.AckFloor.Stream, stored, stall.Round(time.Millisecond))
}

// takeoverCluster is what `kubenats convert` makes of the chart's
// rendering, with spec.takeover naming the release.
func takeoverCluster(t *testing.T, ns string) *v1alpha1.NatsCluster {
	t.Helper()
	res, err := convert.Chart(chartRendering(t), ns)
	if err != nil || len(res.Lost) != 0 {
		t.Fatalf("convert: %v, lost %v", err, res.Lost)
	}
	c := res.Objects[0].(*v1alpha1.NatsCluster)
	c.Spec.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: c.Name}
	return c
}

// claimUIDs are the UIDs of the chart's data claims.
func claimUIDs(t *testing.T, ns string, names []string) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, n := range names {
		var pvc corev1.PersistentVolumeClaim
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: ns, Name: v1alpha1.ChartDataVolume + "-" + n}, &pvc); err != nil {
			t.Fatal(err)
		}
		out[n] = pvc.UID
	}
	return out
}

// checkTakenOver: the StatefulSet is the cluster's, every server pod runs
// its template with closed routes on the chart's claim, and the chart's
// Services are the cluster's.
func checkTakenOver(t *testing.T, c *v1alpha1.NatsCluster, names []string, claims map[string]types.UID) {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, &sts); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&sts, c) {
		t.Errorf("StatefulSet %s is not the NatsCluster's: %v", sts.Name, sts.OwnerReferences)
	}
	for _, n := range names {
		var p corev1.Pod
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: c.Namespace, Name: n}, &p); err != nil {
			t.Fatal(err)
		}
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision || p.Annotations[render.AnnotationRouteTLS] != render.RoutesTLS {
			t.Errorf("%s runs revision %s with routes %q, want %s with %q", n, p.Labels[appsv1.ControllerRevisionHashLabelKey], p.Annotations[render.AnnotationRouteTLS], sts.Status.UpdateRevision, render.RoutesTLS)
		}
		var pvc corev1.PersistentVolumeClaim
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: c.Namespace, Name: v1alpha1.ChartDataVolume + "-" + n}, &pvc); err != nil || pvc.UID != claims[n] {
			t.Errorf("%s's claim: %v, UID %s, want the chart's %s", n, err, pvc.UID, claims[n])
		}
	}
	for _, name := range []string{c.ClientServiceName(), c.HeadlessServiceName()} {
		var svc corev1.Service
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: c.Namespace, Name: name}, &svc); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(&svc, c) {
			t.Errorf("Service %s is not the NatsCluster's", name)
		}
	}
}

// chartRendering is the official chart's rendering of a three-server
// JetStream release named nats (package upstream: the project's
// chart-shaped stand-in, or the real rendering when
// KUBENATS_UPSTREAM_FIXTURES names it), with its image moved to a
// nats-server version the loopback kubelet has built (the chart's 2.14.2
// differs from it only in patches).
func chartRendering(t *testing.T) [][]byte {
	t.Helper()
	data := []byte(upstream.Edit(t, string(upstream.ChartRendering(t)), "nats:"+upstream.ChartVersion+"-alpine", "nats:"+chartServerVersion+"-alpine"))
	docs, err := manifest.Documents(data)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

const chartServerVersion = "2.14.10"

// installChart applies the chart's rendering in ns, as `helm install`
// would, and waits for its three servers to be ready.
func installChart(t *testing.T, ns string) {
	t.Helper()
	for _, d := range chartRendering(t) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		if err := cluster.Client.Create(testCtx(t), u); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, formTimeout, func() error {
		var pods corev1.PodList
		if err := cluster.Client.List(testCtx(t), &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		if ready != 3 {
			return fmt.Errorf("%d of the chart's pods ready", ready)
		}
		return nil
	})
}
