package realnode_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/promserver"
	"github.com/kubenats/kubenats/test/realnode"
)

// thousand is the streams (each with a consumer) the exporter is proven
// at: BenchmarkScrapeCost's load, 14,000 series before the cap.
const thousand = 1000

// TestExporterWithinItsLimitAtAThousandStreams: a server with monitoring
// on, holding 1000 streams and 1000 consumers, scraped by the real
// Prometheus every two seconds: the metrics container serves the
// exporter's series (the cap's worth) and stays within its shipped 64 Mi
// limit, which the real node enforces (memory cgroup, read from the
// container's process): no OOM kill, no restart, over at least ten
// scrapes. Its peak (page cache included, which the kernel reclaims at
// the limit) is logged: 42.7 MiB in the first run. Careless variant seen
// failing: the container's limit not rendered (the cgroup had none). Not
// seen failing: the exporter without GOMEMLIMIT stays under the limit at
// this load too.
func TestExporterWithinItsLimitAtAThousandStreams(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	c := formCluster(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true}
	})
	js := e2ekit.AppJetStream(t, clientConn(t, c))
	began := time.Now()
	for i := range thousand {
		name := "S" + strconv.Itoa(i)
		if _, err := js.CreateStream(ctxOf(t), natsjs.StreamConfig{Name: name, Subjects: []string{"s." + strconv.Itoa(i)}}); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if _, err := js.CreateOrUpdateConsumer(ctxOf(t), name, natsjs.ConsumerConfig{Durable: "C", AckPolicy: natsjs.AckExplicitPolicy}); err != nil {
			t.Fatalf("consumer %d: %v", i, err)
		}
	}
	t.Logf("%d streams and consumers made in %s", thousand, time.Since(began).Round(time.Millisecond))

	pod := &corev1.Pod{}
	if err := node.Client.Get(ctxOf(t), client.ObjectKey{Namespace: ns, Name: c.PodName(0)}, pod); err != nil {
		t.Fatal(err)
	}
	pid, err := realnode.ContainerPID(pod, render.MetricsContainerName)
	if err != nil {
		t.Fatal(err)
	}
	limit, err := realnode.MemoryLimit(pid)
	if err != nil || limit != 64<<20 {
		t.Fatalf("the metrics container's memory limit %d (%v), want the shipped 64Mi enforced", limit, err)
	}
	target := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(render.MetricsPort))
	prom := promserver.Start(t, promserver.Binary(repoRoot(t)), t.TempDir(), promserver.Config{
		Global:        promserver.Global{ScrapeInterval: "2s", ScrapeTimeout: "2s", EvaluationInterval: "2s"},
		ScrapeConfigs: []promserver.ScrapeConfig{{JobName: "exporter", StaticConfigs: []promserver.StaticConfig{{Targets: []string{target}}}}},
	}, nil)
	scraped := time.Now()
	poll.Until(t, 3*time.Minute, func() error {
		samples, err := prom.Query(ctxOf(t), `count_over_time(scrape_samples_scraped{job="exporter"}[5m])`)
		if err != nil {
			return err
		}
		if len(samples) != 1 || samples[0].Value < 10 {
			return fmt.Errorf("scrapes so far: %v", samples)
		}
		series, err := prom.Query(ctxOf(t), `scrape_samples_scraped{job="exporter"}`)
		if err != nil || len(series) != 1 || series[0].Value < 9000 {
			return fmt.Errorf("samples in the last scrape: %v (%v), want the cap's worth", series, err)
		}
		return nil
	})
	peak, err := realnode.MemoryPeak(pid)
	if err != nil {
		t.Fatal(err)
	}
	kills, err := realnode.OOMKills(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == render.MetricsContainerName && (cs.RestartCount != 0 || kills != 0) {
			t.Fatalf("the metrics container restarted %d times (OOM kills in its cgroup: %d; last state %+v)", cs.RestartCount, kills, cs.LastTerminationState)
		}
	}
	t.Logf("ten scrapes or more of %d streams and consumers over %s: the metrics container's peak %.1f MiB (page cache included) under its %d MiB limit, no OOM kill",
		thousand, time.Since(scraped).Round(time.Second), float64(peak)/(1<<20), limit>>20)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := realnode.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}
