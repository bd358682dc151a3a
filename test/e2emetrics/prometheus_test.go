package e2emetrics_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/promserver"
)

// The known workload of TestMetricsWithARealPrometheus: N messages into an
// R3 stream, M of them fetched and acked by its consumer.
const (
	workloadN = 100
	workloadM = 40
	// metricsClaim is small, so that the storage alert's 80 % is reached
	// with ~55 MiB per server (max_file_store is half of it).
	metricsClaim = "128Mi"
)

// TestMetricsWithARealPrometheus: a real Prometheus discovers the metrics
// containers through the loopback API server (kubernetes_sd_configs, role
// pod, with the namespace, labels and port of the PodMonitor render makes),
// scrapes the exporters the loopback kubelet runs beside each server, and
// evaluates config/prometheus/rules.yaml (with `for` shortened, see
// promScrape). The test asks it in PromQL over its HTTP API, as a user
// would. One NatsCluster (A, three servers) and one Prometheus serve the
// sub-tests, in order: the kill comes last. A one-server cluster in
// namespace B and a second Prometheus, bound to A by its token's RBAC,
// prove the isolation.
func TestMetricsWithARealPrometheus(t *testing.T) {
	// Mostly waits for scrapes and alerts: runs beside the other parallel
	// tests (main_test.go).
	t.Parallel()
	began := time.Now()
	a := e2ekit.FormCluster(t, monitored(metricsClaim))
	b := e2ekit.FormCluster(t, monitored(""), func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](1) })
	admin := startPrometheus(t, "admin", scrapeJobs(t, adminKubeconfig(t), a.Cluster, b.Cluster), true)
	// The reader is configured for both namespaces, as a platform's
	// Prometheus would be; its token's RBAC is what limits it to A.
	reader := startPrometheus(t, "reader", scrapeJobs(t, readerKubeconfig(t, a.NS), a.Cluster, b.Cluster), false)
	t.Logf("two clusters formed and two Prometheus servers ready in %s", time.Since(began).Round(time.Second))

	t.Run("workload counted once per stream and consumer", func(t *testing.T) { checkWorkloadCounts(t, a, admin) })
	t.Run("dashboards use the labels the scrape serves", func(t *testing.T) { checkDashboardLabels(t, a, admin) })
	t.Run("a reader of namespace A gets none of B", func(t *testing.T) { checkReaderIsolation(t, a, b, admin, reader) })
	t.Run("store past 80 percent fires the storage alert", func(t *testing.T) { checkStorageAlert(t, a, admin) })
	t.Run("server down fires, resolves, and its series continue", func(t *testing.T) { checkServerDown(t, a, admin) })
	// The dashboards as they showed all of the above (make dashboard-images).
	writeDashboardAnswers(t, admin, a, began)
	t.Logf("whole test: %s", time.Since(began).Round(time.Second))
}

// selector picks f's series.
func selector(f *e2ekit.Formed) string {
	return fmt.Sprintf(`namespace=%q,natscluster=%q`, f.NS, f.Cluster.Name)
}

// checkWorkloadCounts: the stream shows exactly N messages and its
// consumer exactly N-M pending and none awaiting an ack, each as one
// series, over a window of several scrapes. Careless variant watched
// failing: the exporter serving every replica's view of a stream and its
// consumers instead of the leader's only (internal/exporter/jsz.go), which
// shows each stream three times (three series, a sum of 3N).
func checkWorkloadCounts(t *testing.T, f *e2ekit.Formed, p *promserver.Server) {
	ctx := e2ekit.Ctx(t)
	nc := e2ekit.AppConn(t, f, "e2e-metrics", f.Pods...)
	js := e2ekit.AppJetStream(t, nc)
	stream, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3, Storage: natsjs.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	for i := range workloadN {
		if _, err := js.Publish(ctx, "orders.new", fmt.Appendf(nil, "order %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, natsjs.ConsumerConfig{Durable: "SHIP", AckPolicy: natsjs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for acked := 0; acked < workloadM; {
		batch, err := cons.Fetch(workloadM-acked, natsjs.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			if err := msg.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
			acked++
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	sel := selector(f)
	// Over the last three scrapes: on a loaded machine one scrape of the
	// leader's exporter may miss its read of the server (the series then
	// go stale until the next), which is not what this counts. Every
	// replica's series would still show as three.
	recent := func(q string) string { return fmt.Sprintf("last_over_time(%s[%s])", q, 3*promScrape) }
	want := []struct {
		q    string
		want float64
	}{
		{recent(fmt.Sprintf(`nats_stream_total_messages{%s,stream_name="ORDERS"}`, sel)), workloadN},
		{recent(fmt.Sprintf(`nats_consumer_num_pending{%s,stream_name="ORDERS",consumer_name="SHIP"}`, sel)), workloadN - workloadM},
		{recent(fmt.Sprintf(`nats_consumer_num_ack_pending{%s,stream_name="ORDERS",consumer_name="SHIP"}`, sel)), 0},
	}
	check := func() error {
		for _, w := range want {
			got, err := promOne(ctx, p, w.q)
			if err != nil {
				return err
			}
			if got != w.want {
				return fmt.Errorf("%s = %v, want %v", w.q, got, w.want)
			}
		}
		return nil
	}
	e2ekit.Eventually(t, e2ekit.Wait, check)
	// Every server is scraped several times in the window: a follower's
	// series would show within it.
	poll.Holds(t, 4*promScrape, check)
}

// checkReaderIsolation: the reader, whose ServiceAccount may list only
// A's pods, scrapes A's three servers and has no series of B over a
// window, while the admin's Prometheus does have B's (so that the
// absence means something). Careless variant watched failing: the
// reader's Role bound cluster-wide (a ClusterRole and ClusterRoleBinding,
// as a shared Prometheus is often given), which lets it discover B's pods
// and read B's streams.
//
// That part is Kubernetes RBAC's. What kubenats renders decides the rest:
// a Prometheus shared by every namespace, read per tenant through the
// namespace label (a label-enforcing proxy), shows A's reader what is
// labelled A. A tenant's pod in B that carries the labels of B's servers,
// and serves series that name A's namespace and cluster, is scraped
// (checked: so that the absence means something) under B's namespace,
// and nothing it serves ever reads as A's. Careless variants watched
// failing: the PodMonitor with honorLabels (the forged namespace wins,
// and A's view holds B's numbers), and without the labeldrop (the forged
// namespace stays, as exported_namespace, for a query or a dashboard to
// pick up).
func checkReaderIsolation(t *testing.T, a, b *e2ekit.Formed, admin, reader *promserver.Server) {
	ctx := e2ekit.Ctx(t)
	servers := func(p *promserver.Server, f *e2ekit.Formed) (float64, error) {
		got, err := p.Query(ctx, fmt.Sprintf(`count(kubenats_exporter_server_up{%s} == 1)`, selector(f)))
		if err != nil || len(got) == 0 {
			return 0, err
		}
		return got[0].Value, nil
	}
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if n, err := servers(admin, b); err != nil || n != 1 {
			return fmt.Errorf("the admin's Prometheus sees %v of B's 1 server (%v)", n, err)
		}
		if n, err := servers(reader, a); err != nil || n != 3 {
			return fmt.Errorf("the reader sees %v of A's 3 servers (%v)", n, err)
		}
		return nil
	})
	poll.Holds(t, 4*promScrape, func() error {
		got, err := reader.Query(ctx, fmt.Sprintf(`count by (namespace) ({__name__=~"nats_.+|kubenats_.+",namespace!=%q})`, a.NS))
		if err != nil {
			return err
		}
		if len(got) != 0 {
			return fmt.Errorf("the reader of %s has series of %v", a.NS, got)
		}
		targets, err := reader.Targets(ctx)
		if err != nil {
			return err
		}
		if len(targets) != 3 {
			return fmt.Errorf("the reader scrapes %d targets, want A's 3: %v", len(targets), targets)
		}
		return nil
	})

	startForgedTarget(t, a, b)
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		got, err := admin.Query(ctx, fmt.Sprintf(`nats_varz_connections{pod=%q}`, forgedPod))
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0].Labels["namespace"] != b.NS {
			return fmt.Errorf("the forged pod's series, want one in %s: %v", b.NS, got)
		}
		return nil
	})
	poll.Holds(t, 4*promScrape, func() error {
		for _, q := range []string{
			fmt.Sprintf(`{__name__=~"nats_.+|kubenats_.+",namespace=%q} == %d`, a.NS, forgedConnections),
			fmt.Sprintf(`{pod=%q,namespace!=%q}`, forgedPod, b.NS),
			`{exported_namespace!=""}`,
		} {
			got, err := admin.Query(ctx, q)
			if err != nil {
				return err
			}
			if len(got) != 0 {
				return fmt.Errorf("%s: %d series, the first %v", q, len(got), got[0])
			}
		}
		return nil
	})
}

// checkStorageAlert: an R3 stream filled to 85 % of max_file_store makes
// NatsJetStreamStorageHigh fire for each of the three servers. Careless
// variant watched failing: the rule on the wrong series (used memory over
// max memory, whose ratio stays near zero), which never fires.
func checkStorageAlert(t *testing.T, f *e2ekit.Formed, p *promserver.Server) {
	ctx, cancel := context.WithTimeout(e2ekit.Ctx(t), 5*time.Minute)
	defer cancel()
	nc := e2ekit.AppConn(t, f, "e2e-metrics-filler", f.Pods...)
	js := e2ekit.AppJetStream(t, nc)
	e2ekit.CreateStream(t, js, natsjs.StreamConfig{Name: "FILL", Subjects: []string{"fill.>"}, Replicas: 3, Storage: natsjs.FileStorage})
	claim := resource.MustParse(metricsClaim)
	limit := render.FileStoreLimit(claim.Value())
	payload := make([]byte, 64<<10)
	for written := int64(0); written < limit*85/100; written += int64(len(payload)) {
		// Each publish bounded: a lost acknowledgement would otherwise
		// hold the test for what is left of ctx.
		pubCtx, cancelPub := context.WithTimeout(ctx, e2ekit.Wait)
		_, err := js.Publish(pubCtx, "fill.x", payload)
		cancelPub()
		if err != nil {
			t.Fatalf("filling to 85 %% of %d MiB after %d MiB: %v", limit>>20, written>>20, err)
		}
	}
	began := time.Now()
	e2ekit.Eventually(t, e2ekit.Wait+storageFor, func() error {
		for _, pod := range f.Pods {
			a, err := firing(ctx, p, "NatsJetStreamStorageHigh", map[string]string{"namespace": f.NS, "server_name": pod})
			if err != nil {
				return err
			}
			if a == nil {
				return fmt.Errorf("NatsJetStreamStorageHigh is not firing for %s", pod)
			}
		}
		return nil
	})
	t.Logf("NatsJetStreamStorageHigh fired for all three servers %s after the store passed 85 %% (for: %s)", time.Since(began).Round(time.Second), storageFor)
	// Room again for what follows.
	e2ekit.DeleteStream(t, js, "FILL")
}

// checkServerDown: a server frozen (SIGSTOP: the kernel still accepts its
// connections, nothing answers, as a hung or dying process) shows as down
// and NatsServerDown fires for it once its `for` has passed, not before;
// killed and restarted by the kubelet it comes back as a new process, the
// alert resolves, and its series continue under the same labels: one
// label set per series across the restart, which the series itself shows
// (its uptime went back to zero). Careless variant watched failing: the
// exporter labelling series by the server's id (a new one at every
// start), which breaks each series in two at the restart.
func checkServerDown(t *testing.T, f *e2ekit.Formed, p *promserver.Server) {
	ctx := e2ekit.Ctx(t)
	const victim = "nats-2"
	sel := fmt.Sprintf(`%s,server_name=%q`, selector(f), victim)
	labels := map[string]string{"namespace": f.NS, "server_name": victim}
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if up, err := promOne(ctx, p, `kubenats_exporter_server_up{`+sel+`}`); err != nil || up != 1 {
			return fmt.Errorf("server_up %v before the freeze (%v)", up, err)
		}
		return nil
	})
	restartsBefore := natsRestarts(t, f, victim)
	frozen := time.Now()
	if err := cluster.Kill(f.NS, victim, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var fired *promserver.Alert
	e2ekit.Eventually(t, downFor+e2ekit.Wait, func() error {
		a, err := firing(ctx, p, "NatsServerDown", labels)
		if err != nil {
			return err
		}
		if a == nil {
			return errors.New("NatsServerDown is not firing")
		}
		fired = a
		return nil
	})
	firedAfter := time.Since(frozen)
	if held := time.Since(fired.ActiveAt); held < downFor {
		t.Errorf("NatsServerDown fired %s after it became active, before its for (%s)", held, downFor)
	}
	t.Logf("NatsServerDown fired %s after the freeze (for: %s, scrape every %s)", firedAfter.Round(time.Second), downFor, promScrape)
	// Killed as its liveness probe would have it killed; the kubelet
	// starts it again.
	if err := cluster.Kill(f.NS, victim, syscall.SIGKILL); err != nil {
		t.Logf("SIGKILL: %v (the kubelet had killed it already)", err)
	}
	e2ekit.Eventually(t, e2ekit.FormTimeout, func() error {
		if n := natsRestarts(t, f, victim); n <= restartsBefore {
			return fmt.Errorf("restart count %d, was %d", n, restartsBefore)
		}
		return nil
	})
	e2ekit.Eventually(t, e2ekit.FormTimeout, func() error {
		if on, err := active(ctx, p, "NatsServerDown", labels); err != nil || on {
			return fmt.Errorf("NatsServerDown still active (%v)", err)
		}
		if up, err := promOne(ctx, p, `kubenats_exporter_server_up{`+sel+`}`); err != nil || up != 1 {
			return fmt.Errorf("server_up %v after the restart (%v)", up, err)
		}
		return nil
	})
	t.Logf("NatsServerDown resolved %s after the freeze", time.Since(frozen).Round(time.Second))
	// From before the freeze to now, one label set per series.
	window := fmt.Sprintf("%ds", int(time.Since(frozen).Seconds())+int((4*promScrape).Seconds()))
	for _, family := range []string{"nats_varz_uptime_seconds", "nats_varz_connections", "kubenats_exporter_server_up"} {
		sets, err := promOne(ctx, p, fmt.Sprintf(`count(count_over_time(%s{%s}[%s]))`, family, sel, window))
		if err != nil {
			t.Fatal(err)
		}
		if sets != 1 {
			t.Errorf("%s of %s had %v label sets across the restart, want 1", family, victim, sets)
		}
	}
	resets, err := promOne(ctx, p, fmt.Sprintf(`resets(nats_varz_uptime_seconds{%s}[%s])`, sel, window))
	if err != nil {
		t.Fatal(err)
	}
	if resets < 1 {
		t.Errorf("the uptime series of %s shows no restart", victim)
	}
}

// natsRestarts is the restart count of the pod's nats container.
func natsRestarts(t *testing.T, f *e2ekit.Formed, pod string) int32 {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: pod}}
	if err := cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if cs := e2ekit.NatsStatus(p); cs != nil {
		return cs.RestartCount
	}
	return 0
}
