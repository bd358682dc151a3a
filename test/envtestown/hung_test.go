package envtestown_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testns"
)

// wait bounds every wait for something that must happen: generous, reached
// only when something is broken.
const wait = 30 * time.Second

// heldBack is how long the one-worker operator is watched holding the
// other cluster back: a negative, held over a window.
const heldBack = 3 * time.Second

// TestAHungClusterHoldsNoOtherBack: a cluster whose one server is ready but
// does not answer (its monitor port takes the operator's request and holds
// it until the test lets go) keeps a pass of the operator waiting. With
// the shipped worker count, another cluster created while that request is
// held gets its first status while the request is still held: nothing
// waits on the hung cluster but its own pass. With one worker (the
// careless operator, and what the operator was before), the same scene
// holds the other cluster's first status back for as long as the request
// is held, and the status comes once the test lets go: the test can fail.
//
// The operators' answer bound is longer than any wait here, so that only
// the test ends a held request; the shipped bound (3 s) would end it by
// itself and make the test a race against the clock.
func TestAHungClusterHoldsNoOtherBack(t *testing.T) {
	t.Run("shipped workers", func(t *testing.T) {
		hung, other := namespace(t, "hung"), namespace(t, "other")
		startOperator(t, manager.Options{}, hung, other)
		mon := hungCluster(t, hung)
		mon.awaitHeld(t)
		c := oneServerCluster(t, other)
		poll.Until(t, wait, func() error {
			if mon.abandoned() {
				t.Fatal("the operator gave up the hung server's request before the other cluster had a status")
			}
			if !hasStatus(t, c) {
				return fmt.Errorf("the other cluster %s has no status yet", c.Namespace)
			}
			return nil
		})
		if !mon.holding() {
			t.Fatal("the hung server's request was no longer held when the other cluster's status was seen")
		}
		mon.release()
	})
	t.Run("one worker is held back", func(t *testing.T) {
		hung, other := namespace(t, "hung"), namespace(t, "other")
		startOperator(t, manager.Options{NatsClusterWorkers: 1}, hung, other)
		mon := hungCluster(t, hung)
		mon.awaitHeld(t)
		c := oneServerCluster(t, other)
		poll.Holds(t, heldBack, func() error {
			if hasStatus(t, c) {
				return fmt.Errorf("the other cluster got a status while the only worker waited on the hung cluster")
			}
			if !mon.holding() {
				return fmt.Errorf("the hung server's request ended before the test let go")
			}
			return nil
		})
		mon.release()
		poll.Until(t, wait, func() error {
			if !hasStatus(t, c) {
				return fmt.Errorf("the other cluster has no status after the hung server answered")
			}
			return nil
		})
	})
}

// startOperator runs an operator with o, confined to namespaces, until
// the test ends. Its answer bound is longer than any wait here unless o
// says otherwise, so that only a test ends a held request.
func startOperator(t *testing.T, o manager.Options, namespaces ...string) {
	t.Helper()
	startOperatorWith(t, operatorCfg, o, namespaces...)
}

// startOperatorWith is startOperator reaching the API server through cfg.
func startOperatorWith(t *testing.T, cfg *rest.Config, o manager.Options, namespaces ...string) {
	t.Helper()
	o.WatchNamespaces = namespaces
	if o.ServerAnswerBound == 0 {
		o.ServerAnswerBound = 10 * time.Minute
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop, err := inprocess.OperatorWith(ctx, cfg, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := stop(); err != nil {
			t.Errorf("operator: %v", err)
		}
	})
}

// holdingMonitor is a server's monitor port that takes each request and
// answers nothing until released: a SIGSTOPped server, whose kernel still
// accepts connections, with the test deciding when it resumes.
type holdingMonitor struct {
	mu       sync.Mutex
	held     int  // requests held now
	gaveUp   bool // a request's client went away before release
	arrived  chan struct{}
	released chan struct{}
	once     sync.Once
}

func holdMonitor(t *testing.T, ip string) *holdingMonitor {
	t.Helper()
	m := &holdingMonitor{arrived: make(chan struct{}), released: make(chan struct{})}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(render.MonitorPort)))
	if err != nil {
		t.Fatal(err)
	}
	var arrivedOnce sync.Once
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.held++
		m.mu.Unlock()
		arrivedOnce.Do(func() { close(m.arrived) })
		select {
		case <-m.released:
		case <-r.Context().Done():
			m.mu.Lock()
			m.gaveUp = true
			m.mu.Unlock()
		}
		m.mu.Lock()
		m.held--
		m.mu.Unlock()
		_, _ = w.Write([]byte("{}"))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		m.release()
		_ = srv.Close()
	})
	return m
}

// awaitHeld waits until the operator's first request is being held: its
// pass of the hung cluster waits from then on.
func (m *holdingMonitor) awaitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-m.arrived:
	case <-time.After(wait):
		t.Fatal("the operator never asked the hung server")
	}
}

// holding: a request is held and none was given up.
func (m *holdingMonitor) holding() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held > 0 && !m.gaveUp
}

func (m *holdingMonitor) abandoned() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gaveUp
}

func (m *holdingMonitor) release() { m.once.Do(func() { close(m.released) }) }

// hungCluster is a one-server cluster in ns whose StatefulSet is settled
// and whose server's pod is running and ready at a loopback address where
// a holding monitor listens.
func hungCluster(t *testing.T, ns string) *holdingMonitor {
	t.Helper()
	c, sts := settledCluster(t, ns, "nats")
	return hang(t, c, sts)
}

// settledCluster is a one-server cluster in ns whose StatefulSet is
// settled, with no pod yet: nothing for the operator to wait on.
func settledCluster(t *testing.T, ns, name string) (*v1alpha1.NatsCluster, *appsv1.StatefulSet) {
	t.Helper()
	c := serverCluster(t, ns, name)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.Name}}
	poll.Until(t, wait, func() error { return k8s.Get(context.Background(), client.ObjectKeyFromObject(sts), sts) })
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, CurrentReplicas: 1, AvailableReplicas: 1,
		CurrentRevision: "r1", UpdateRevision: "r1",
	}
	if err := k8s.Status().Update(context.Background(), sts); err != nil {
		t.Fatal(err)
	}
	return c, sts
}

// hang gives c's StatefulSet its server pod, running and ready at a
// loopback address where a holding monitor listens.
func hang(t *testing.T, c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet) *holdingMonitor {
	t.Helper()
	ip := fmt.Sprintf("127.%d.%d.1", 100+rand.IntN(150), 1+rand.IntN(254))
	mon := holdMonitor(t, ip)
	readyPod(t, c, sts, ip)
	return mon
}

// readyPod makes the cluster's server pod <name>-0, running and ready at
// ip. It joins the operator's cache (the managed-by label) only once its
// status says so.
func readyPod(t *testing.T, c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet, ip string) {
	t.Helper()
	labels := render.SelectorLabels(c)
	labels[appsv1.ControllerRevisionHashLabelKey] = "r1"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name + "-0", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nats", Image: "nats"}}},
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
	}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	pod.Labels[render.LabelManagedBy] = render.ManagedBy
	if err := k8s.Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// oneServerCluster creates a NatsCluster "nats" of one server without
// JetStream in ns.
func oneServerCluster(t *testing.T, ns string) *v1alpha1.NatsCluster {
	t.Helper()
	return serverCluster(t, ns, "nats")
}

// serverCluster is oneServerCluster under another name.
func serverCluster(t *testing.T, ns, name string) *v1alpha1.NatsCluster {
	t.Helper()
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.Replicas = ptr.To[int32](1)
	c.Spec.JetStream.Enabled = ptr.To(false)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// hasStatus: the operator has written the cluster's status once.
func hasStatus(t *testing.T, c *v1alpha1.NatsCluster) bool {
	var live v1alpha1.NatsCluster
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &live); err != nil {
		t.Fatal(err)
	}
	return live.Status.ObservedGeneration > 0 || len(live.Status.Conditions) > 0
}

// namespace makes a fresh namespace for t, its name marked with what.
func namespace(t *testing.T, what string) string {
	t.Helper()
	name := testns.Name(t) + "-" + what
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}
