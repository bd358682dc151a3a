package bench

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"context"
	"fmt"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/testnats"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// objects is how many streams, and as many consumers, a run applies.
var objects = envInt("KUBENATS_BENCH_OBJECTS", 1000)

const (
	creators = 16 // concurrent creators of resources
	natsCos  = 8  // goroutines of the nats.go floor
	idleFor  = 60 * time.Second
)

// BenchmarkJetStreamConvergence applies 1000 Streams and 1000 Consumers and
// reports, in one run: (a) time until all are Ready; (b) the operator's
// peak RSS; (c) its API writes per object; (d) its API requests during 60
// idle seconds after convergence; and the floors (e) the same objects made
// directly with nats.go and (f) the same resources created in the API
// server with no operator running.
func BenchmarkJetStreamConvergence(b *testing.B) {
	k, cfg, kubeconfig, root := controlPlane(b)
	ready := watchReadiness(b, cfg)
	binary := operatorBinary(b, root)
	ns := natsServer(b)

	floorAPI := createResources(b, k, "floor-api", serverURL(ns))
	floorNATS := createDirect(b, natsServer(b))

	// The floor's resources never had an operator, hence no finalizers:
	// they go at once, and the operator starts on an empty cluster.
	for _, obj := range []client.Object{&v1alpha1.Consumer{}, &v1alpha1.Stream{}} {
		if err := k.DeleteAllOf(context.Background(), obj, client.InNamespace("floor-api")); err != nil {
			b.Fatal(err)
		}
	}

	op := startOperator(b, binary, kubeconfig, freePort(b))
	settled, err := op.requests()
	if err != nil {
		b.Fatal(err)
	}

	start := time.Now()
	createResources(b, k, "run", serverURL(ns))
	ready.wait(b, "run", time.Hour)
	converge := time.Since(start)

	done, _ := op.requests()
	b.Logf("reconciles:\n%s", op.reconcileSummary())
	time.Sleep(idleFor) // the measurement window itself
	idle, _ := op.requests()

	writes := delta(settled, done, "POST", "PUT", "PATCH", "DELETE") / float64(2*objects)
	b.ReportMetric(converge.Seconds(), "a_ready_s")
	b.ReportMetric(op.peakRSS(), "b_peak_rss_MiB")
	b.ReportMetric(writes, "c_writes/object")
	b.ReportMetric(delta(done, idle), "d_idle_requests")
	b.ReportMetric(floorNATS.Seconds(), "e_nats_floor_s")
	b.ReportMetric(floorAPI.Seconds(), "f_api_floor_s")
	b.ReportMetric(converge.Seconds()/floorAPI.Seconds(), "a/f")
	b.ReportMetric(converge.Seconds()/floorNATS.Seconds(), "a/e")
	b.Logf("a %s, f %s, e %s; %.0f API requests while converging, %.0f idle",
		converge.Round(time.Millisecond), floorAPI.Round(time.Millisecond), floorNATS.Round(time.Millisecond),
		delta(settled, done), delta(done, idle))
}

// createResources creates 1000 Streams and 1000 Consumers in namespace ns
// with 16 concurrent creators and returns how long that took.
func createResources(b *testing.B, k client.Client, ns, url string) time.Duration {
	b.Helper()
	ctx := context.Background()
	if err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	target := v1alpha1.Target{Connection: &v1alpha1.Connection{Servers: []string{url}}}
	start := time.Now()
	parallel(b, creators, objects, func(i int) error {
		name := fmt.Sprintf("%s-%04d", ns, i)
		st := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		st.Spec.Target, st.Spec.Name, st.Spec.Subjects = target, name, []string{name + ".>"}
		if err := k.Create(ctx, st); err != nil {
			return err
		}
		c := &v1alpha1.Consumer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		c.Spec.Target, c.Spec.StreamName, c.Spec.DurableName = target, name, "worker"
		return k.Create(ctx, c)
	})
	return time.Since(start)
}

// createDirect is the NATS floor: the same streams and consumers made with
// nats.go from 8 goroutines.
func createDirect(b *testing.B, s *server.Server) time.Duration {
	b.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	j, err := js.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	parallel(b, natsCos, objects, func(i int) error {
		name := fmt.Sprintf("direct-%04d", i)
		if _, err := j.CreateStream(ctx, js.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: js.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
			return err
		}
		_, err := j.CreateConsumer(ctx, name, js.ConsumerConfig{Durable: "worker", AckPolicy: js.AckExplicitPolicy, AckWait: 30 * time.Second})
		return err
	})
	return time.Since(start)
}

// readiness watches Streams and Consumers through an informer, so that
// waiting for them costs the API server one watch, not a list per poll.
type readiness struct{ cache cache.Cache }

func watchReadiness(b *testing.B, cfg *rest.Config) *readiness {
	b.Helper()
	c, err := cache.New(cfg, cache.Options{Scheme: manager.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for _, obj := range []client.Object{&v1alpha1.Stream{}, &v1alpha1.Consumer{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			b.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the informer never synced")
	}
	return &readiness{cache: c}
}

// wait polls the informer until every Stream and Consumer in ns is Ready.
func (r *readiness) wait(b *testing.B, ns string, timeout time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var streams v1alpha1.StreamList
		var consumers v1alpha1.ConsumerList
		_ = r.cache.List(context.Background(), &streams, client.InNamespace(ns))
		_ = r.cache.List(context.Background(), &consumers, client.InNamespace(ns))
		ready := 0
		for i := range streams.Items {
			if meta.IsStatusConditionTrue(streams.Items[i].Status.Conditions, v1alpha1.ConditionReady) {
				ready++
			}
		}
		for i := range consumers.Items {
			if meta.IsStatusConditionTrue(consumers.Items[i].Status.Conditions, v1alpha1.ConditionReady) {
				ready++
			}
		}
		if ready == 2*objects {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d resources Ready in %s after %s", ready, 2*objects, ns, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parallel runs fn(0..n-1) on workers goroutines and fails on the first error.
func parallel(b *testing.B, workers, n int, fn func(i int) error) {
	b.Helper()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

func natsServer(b *testing.B) *server.Server { return testnats.Start(b, 0) }

func serverURL(s *server.Server) string { return testnats.URL(s) }

func freePort(b *testing.B) int { return testnats.FreePort(b) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
