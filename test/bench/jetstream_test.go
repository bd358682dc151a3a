package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	js "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/testnats"
)

// jetStreamSize is how big a run of the JetStream benchmark is: how many
// Streams it applies, and as many Consumers, and how long it watches the
// idle operator after convergence.
type jetStreamSize struct {
	objects int
	// systems is how many NATS systems (nats-servers) the resources are
	// spread over, round robin.
	systems int
	idleFor time.Duration
}

// fullJetStream is what `make bench` measures; KUBENATS_BENCH_OBJECTS
// changes the count.
var fullJetStream = jetStreamSize{
	objects: envInt("KUBENATS_BENCH_OBJECTS", 1000),
	systems: envInt("KUBENATS_BENCH_SYSTEMS", 1),
	idleFor: 60 * time.Second,
}

const (
	creators = 16 // concurrent creators of resources
	natsCos  = 8  // goroutines of the nats.go floor
)

// BenchmarkJetStreamConvergence applies 1000 Streams and 1000 Consumers and
// reports, in one run: (a) time until all are Ready; (b) the operator's
// peak RSS; (c) its API writes per object; (d) its API requests during 60
// idle seconds after convergence; and the floors (e) the same objects made
// directly with nats.go, (f) the same resources created in the API server
// with no operator running, and (g) as (f), each resource then given one
// Ready status write: the least any operator must write.
func BenchmarkJetStreamConvergence(b *testing.B) {
	jetStreamConvergence(b, fullJetStream).report(b)
}

func jetStreamConvergence(b testing.TB, size jetStreamSize) *figures {
	k, cfg, kubeconfig, root := controlPlane(b)
	ready := watchReadiness(b, cfg)
	binary := operatorBinary(b, root)
	objects := size.objects
	systems := make([]*server.Server, max(size.systems, 1))
	urls := make([]string, len(systems))
	for i := range systems {
		systems[i] = natsServer(b)
		urls[i] = serverURL(systems[i])
	}

	cpuFloor := cpuSeconds()
	floorAPI, _ := createResources(b, k, "floor-api", urls, objects, false)
	b.Logf("CPU while creating the API floor: %s", cpuReport(cpuFloor, cpuSeconds()))
	floorNATS, natsTimes := createDirect(b, natsServer(b), objects)
	cpuFloor = cpuSeconds()
	floorStatus, statusTimes := createResources(b, k, "floor-status", urls, objects, true)
	b.Logf("CPU while creating the API floor with status: %s", cpuReport(cpuFloor, cpuSeconds()))

	removeFloor(b, k, "floor-api")
	removeFloor(b, k, "floor-status")

	op := startOperator(b, binary, kubeconfig, freePort(b))
	warmUpJetStream(b, k, ready, "run", urls[0])
	settled := op.mustRequests(b)

	cpuBefore, writesBefore := cpuSeconds(), apiServerWrites(b, cfg)
	profileAPIServer(b, cfg, os.Getenv("KUBENATS_BENCH_APISERVER_PROFILE"))
	start := time.Now()
	createResources(b, k, "run", urls, objects, false)
	ready.wait(b, "run", 2*objects+2, time.Hour)
	converge := time.Since(start)
	anon := op.anonRSS(b)
	writeTimeline(b, objects, map[string][]time.Duration{
		"kubenats": ready.readyTimes("run", start), "API floor with status (g)": statusTimes, "nats.go floor (e)": natsTimes,
	})
	b.Logf("CPU while converging: %s", cpuReport(cpuBefore, cpuSeconds()))
	op.saveHeapProfile(b)
	b.Logf("writes to kubenats.io while converging: %s", writesReport(writesBefore, apiServerWrites(b, cfg)))

	done := op.mustRequests(b)
	connections := op.gauge(b, "kubenats_jetstream_pool_connections")
	b.Logf("reconciles:\n%s", op.reconcileSummary())
	time.Sleep(size.idleFor) // the measurement window itself
	idle := op.mustRequests(b)

	rss := op.peakRSS(b) // before the restart ends this process
	rssFloor, cacheSync := cacheFloor(b, root, kubeconfig)
	restart := measureRestart(b, op, binary, kubeconfig, systems, objects)

	writes := delta(settled, done, "POST", "PUT", "PATCH", "DELETE") / float64(2*objects)
	if writes <= 0 {
		b.Fatalf("the operator's counter shows %.0f writes for %d objects made Ready: the measurement is broken", writes, 2*objects)
	}
	f := newFigures("JetStreamConvergence")
	f.set("a_ready_s", converge.Seconds())
	f.set("b_peak_rss_MiB", rss)
	f.set("b_anon_rss_MiB", anon)
	f.set("b_cache_floor_rss_MiB", rssFloor)
	f.set("c_writes/object", writes)
	f.set("d_idle_requests", delta(done, idle))
	f.set("e_nats_floor_s", floorNATS.Seconds())
	f.set("f_api_floor_s", floorAPI.Seconds())
	f.set("g_api_status_floor_s", floorStatus.Seconds())
	f.set("a/f", converge.Seconds()/floorAPI.Seconds())
	f.set("a/e", converge.Seconds()/floorNATS.Seconds())
	f.set("a/g", converge.Seconds()/floorStatus.Seconds())
	f.set("ms/object", float64(converge.Milliseconds())/float64(2*objects))
	f.set("h_restart_recheck_s", restart.recheck.Seconds())
	f.set("i_nats_read_floor_s", restart.readFloor.Seconds())
	f.set("l_cache_sync_floor_s", cacheSync.Seconds())
	f.set("h/i", restart.recheck.Seconds()/restart.readFloor.Seconds())
	f.set("j_restart_writes", restart.writes)
	f.set("k_connections/system", connections/float64(len(systems)))
	b.Logf("a %s, f %s, g %s, e %s; %.0f API requests while converging, %.0f idle",
		converge.Round(time.Millisecond), floorAPI.Round(time.Millisecond), floorStatus.Round(time.Millisecond),
		floorNATS.Round(time.Millisecond), delta(settled, done), delta(done, idle))
	return f
}

// warmUpJetStream makes one Stream and its Consumer Ready in ns before
// anything is timed (in the run's own namespace: the operator's connection
// to a server named by address is per namespace, and the run should find
// it open, as in service). Right after the operator starts, the first changes can reach
// its informers a second or more late (the NatsCluster benchmark's
// warm-up says more): measured here, no resource of the first run was
// Ready before 1.2 s, while the API floor had its first in 0.1 s. An
// operator in service started long ago; its start-up is measured on its
// own, by the restart below.
func warmUpJetStream(b testing.TB, k client.Client, ready *readiness, ns, url string) {
	b.Helper()
	ctx := context.Background()
	if err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, _, err := createPair(ctx, k, ns, "warmup", url); err != nil {
		b.Fatal(err)
	}
	ready.wait(b, ns, 2, 5*time.Minute)
	b.Logf("warm-up: a Stream and its Consumer Ready after %.3fs", time.Since(start).Seconds())
}

// restartResult is how an operator restarted with every object in place
// came back: how long until it had checked each against its server, the
// floor for that (nats.go reading every stream and consumer), and what it
// wrote meanwhile.
type restartResult struct {
	recheck, readFloor time.Duration
	writes             float64
}

// measureRestart stops op, starts the operator again and waits until it
// has reconciled every Stream and Consumer once (a pass compares the
// resource with its server object), counting its writes. The clock starts
// at the new process's start: listing its caches is part of coming back.
func measureRestart(b testing.TB, op *operator, binary, kubeconfig string, systems []*server.Server, objects int) restartResult {
	b.Helper()
	op.stop(b)
	start := time.Now()
	again := startOperator(b, binary, kubeconfig, freePort(b))
	deadline := time.Now().Add(10 * time.Minute)
	// Each Stream and each Consumer once (the warm-up's pair too): a
	// retried one does not stand in for another.
	for n := again.reconciled(b); n["Stream"] < objects+1 || n["Consumer"] < objects+1; n = again.reconciled(b) {
		if time.Now().After(deadline) {
			b.Fatalf("the restarted operator reconciled %v of %d Streams and as many Consumers in 10 minutes", n, objects+1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	recheck := time.Since(start)
	writes := delta(map[string]float64{}, again.mustRequests(b), "POST", "PUT", "PATCH", "DELETE")
	var floor time.Duration
	for _, s := range systems {
		floor += readDirect(b, s)
	}
	return restartResult{recheck: recheck, readFloor: floor, writes: writes}
}

// readDirect is the floor of a restart's recheck: nats.go reading every
// stream's and consumer's info on s from 8 goroutines.
func readDirect(b testing.TB, s *server.Server) time.Duration {
	b.Helper()
	j := testnats.JetStream(b, s)
	ctx := context.Background()
	start := time.Now()
	var names []string
	for info := range j.ListStreams(ctx).Info() {
		names = append(names, info.Config.Name)
	}
	if len(names) == 0 {
		b.Fatalf("nats.go listed no stream on %s", s.ClientURL())
	}
	parallel(b, natsCos, len(names), func(i int) error {
		st, err := j.Stream(ctx, names[i])
		if err != nil {
			return err
		}
		l := st.ListConsumers(ctx)
		for range l.Info() {
		}
		return l.Err()
	})
	return time.Since(start)
}

// createResources creates n Streams and n Consumers in namespace ns
// with 16 concurrent creators and returns how long that took. withStatus
// also writes each one's status once, Ready, as the operator must at the
// least: the floor of what any operator's convergence can cost the API
// server.
func createResources(b testing.TB, k client.Client, ns string, urls []string, objects int, withStatus bool) (time.Duration, []time.Duration) {
	b.Helper()
	ctx := context.Background()
	err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) { // the warm-up's
		b.Fatal(err)
	}
	var mu sync.Mutex
	var done []time.Duration
	start := time.Now()
	parallel(b, creators, objects, func(i int) error {
		name := fmt.Sprintf("%s-%04d", ns, i)
		st, c, err := createPair(ctx, k, ns, name, urls[i%len(urls)])
		if err != nil {
			return err
		}
		if withStatus {
			if err := writeReadyStatus(ctx, k, st, c); err != nil {
				return err
			}
		}
		mu.Lock()
		done = append(done, time.Since(start), time.Since(start)) // a Stream and its Consumer
		mu.Unlock()
		return nil
	})
	return time.Since(start), done
}

// createPair creates the Stream name and its Consumer on the server at url.
func createPair(ctx context.Context, k client.Client, ns, name, url string) (*v1alpha1.Stream, *v1alpha1.Consumer, error) {
	target := v1alpha1.Target{Connection: &v1alpha1.Connection{Servers: []string{url}}}
	st := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	st.Spec.Target, st.Spec.Name, st.Spec.Subjects = target, name, []string{name + ".>"}
	if err := k.Create(ctx, st); err != nil {
		return nil, nil, err
	}
	c := &v1alpha1.Consumer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.Target, c.Spec.StreamName, c.Spec.DurableName = target, name, "worker"
	return st, c, k.Create(ctx, c)
}

// writeReadyStatus gives the pair one Ready status write each, as an
// operator must at the least (on the objects the create calls returned:
// no read).
func writeReadyStatus(ctx context.Context, k client.Client, st *v1alpha1.Stream, c *v1alpha1.Consumer) error {
	for _, obj := range []v1alpha1.JetStreamObject{st, c} {
		meta.SetStatusCondition(&obj.GetJetStreamStatus().Conditions, metav1.Condition{
			Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Synced",
			Message: "the server object matches the spec", ObservedGeneration: 1,
		})
		obj.GetJetStreamStatus().ObservedGeneration = 1
		obj.GetJetStreamStatus().ServerConfigHash = "0123456789abcdef01234567" // as long as a real one
		if err := k.Status().Update(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// removeFloor deletes the API floor's resources, so that the operator starts
// on an empty cluster. They never had an operator, so the finalizer the
// admission policy gave them is taken off here.
func removeFloor(b testing.TB, k client.Client, ns string) {
	b.Helper()
	ctx := context.Background()
	for _, list := range []client.ObjectList{&v1alpha1.ConsumerList{}, &v1alpha1.StreamList{}} {
		if err := k.List(ctx, list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			b.Fatal(err)
		}
		parallel(b, creators, len(items), func(i int) error {
			obj := items[i].(client.Object)
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			if err := k.Patch(ctx, obj, patch); err != nil {
				return err
			}
			return client.IgnoreNotFound(k.Delete(ctx, obj))
		})
	}
}

// createDirect is the NATS floor: the same streams and consumers made with
// nats.go from 8 goroutines.
func createDirect(b testing.TB, s *server.Server, objects int) (time.Duration, []time.Duration) {
	b.Helper()
	j := testnats.JetStream(b, s)
	ctx := context.Background()
	var mu sync.Mutex
	var done []time.Duration
	start := time.Now()
	parallel(b, natsCos, objects, func(i int) error {
		defer func() {
			mu.Lock()
			done = append(done, time.Since(start), time.Since(start))
			mu.Unlock()
		}()
		name := fmt.Sprintf("direct-%04d", i)
		if _, err := j.CreateStream(ctx, js.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: js.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
			return err
		}
		_, err := j.CreateConsumer(ctx, name, js.ConsumerConfig{Durable: "worker", AckPolicy: js.AckExplicitPolicy, AckWait: 30 * time.Second})
		return err
	})
	return time.Since(start), done
}

// readiness counts Ready Streams and Consumers from an informer's events,
// so that waiting for them costs neither the API server (one watch, no
// lists) nor this process's CPU (no copies of 2000 objects per poll).
type readiness struct {
	mu      sync.Mutex
	ready   map[string]bool      // namespace/kind/name -> Ready
	refused map[string]string    // namespace/kind/name -> reason: message, while refused
	readyAt map[string]time.Time // namespace/kind/name -> when first seen Ready
	changed chan struct{}        // signalled after every change
}

func watchReadiness(b testing.TB, cfg *rest.Config) *readiness {
	b.Helper()
	c, err := cache.New(cfg, cache.Options{Scheme: manager.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	r := &readiness{ready: map[string]bool{}, refused: map[string]string{}, readyAt: map[string]time.Time{}, changed: make(chan struct{}, 1)}
	for _, obj := range []client.Object{&v1alpha1.Stream{}, &v1alpha1.Consumer{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.observe(o) },
			UpdateFunc: func(_, o any) { r.observe(o) },
		}); err != nil {
			b.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the informer never synced")
	}
	return r
}

func (r *readiness) observe(o any) {
	obj, ok := o.(v1alpha1.JetStreamObject)
	if !ok {
		return
	}
	key := obj.GetNamespace() + "/" + fmt.Sprintf("%T", obj) + "/" + obj.GetName()
	cond := meta.FindStatusCondition(obj.GetJetStreamStatus().Conditions, v1alpha1.ConditionReady)
	r.mu.Lock()
	r.ready[key] = cond != nil && cond.Status == metav1.ConditionTrue
	if _, seen := r.readyAt[key]; r.ready[key] && !seen {
		r.readyAt[key] = time.Now()
	}
	if cond != nil && cond.Status == metav1.ConditionFalse && refusals[cond.Reason] {
		r.refused[key] = cond.Reason + ": " + cond.Message
	} else {
		delete(r.refused, key)
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// readyTimes are when each resource in ns was first seen Ready, since
// start; those Ready before start are left out.
func (r *readiness) readyTimes(ns string, start time.Time) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for key, at := range r.readyAt {
		if strings.HasPrefix(key, ns+"/") && !at.Before(start) {
			out = append(out, at.Sub(start))
		}
	}
	return out
}

// count is how many resources in ns are Ready.
func (r *readiness) count(ns string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for key, ready := range r.ready {
		if ready && strings.HasPrefix(key, ns+"/") {
			n++
		}
	}
	return n
}

// wait returns once want Streams and Consumers in ns are Ready. A
// resource refused for a reason that is not the benchmark's to wait for
// (the operator would not dial the benchmark's server, say) fails the run
// at once instead of waiting out the timeout.
func (r *readiness) wait(b testing.TB, ns string, want int, timeout time.Duration) {
	b.Helper()
	deadline := time.After(timeout)
	for {
		if r.count(ns) == want {
			return
		}
		if key, why := r.refusal(ns); key != "" {
			b.Fatalf("%s was refused: %s (%d of %d Ready)", key, why, r.count(ns), want)
		}
		select {
		case <-r.changed:
		case <-deadline:
			b.Fatalf("%d of %d resources Ready in %s after %s", r.count(ns), want, ns, timeout)
		}
	}
}

// refusals are the reasons a resource gives that no amount of waiting
// mends in a benchmark: the setup is wrong.
var refusals = map[string]bool{
	"ConnectionFailed": true, "NotAllowed": true, "InvalidSpec": true,
	"ClusterNotFound": true, "SecretNotFound": true, "AlreadyExists": true,
}

// refusal is a resource in ns refused for one of refusals, if any.
func (r *readiness) refusal(ns string) (key, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, why := range r.refused {
		if strings.HasPrefix(k, ns+"/") {
			return k, why
		}
	}
	return "", ""
}

// parallel runs fn(0..n-1) on workers goroutines and fails on the first error.
func parallel(b testing.TB, workers, n int, fn func(i int) error) {
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

func natsServer(b testing.TB) *server.Server { return testnats.Start(b, 0) }

func serverURL(s *server.Server) string { return testnats.URL(s) }

func freePort(b testing.TB) int { return testnats.FreePort(b) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
