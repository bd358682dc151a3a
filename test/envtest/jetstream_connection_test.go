package envtest_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/testnats"
)

func TestNatsDownAtCreateTimeThenBack(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	port := freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	st := newStream(ns, "late", at(url))
	create(t, st)
	jsReady(t, st, metav1.ConditionFalse, "ConnectionFailed")
	if msg := st.Status.Conditions[0].Message; !strings.Contains(msg, "cannot connect to the NATS system") {
		t.Fatalf("message %q does not say what failed", msg)
	}
	s := natsServer(t, port)
	// Retries back off to about a minute at most; the first ones are quick.
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	if _, err := serverStream(t, testnats.JetStream(t, s), "late"); err != nil {
		t.Fatal(err)
	}
}

// TestOneConnectionPerSystem creates streams on three NATS systems and
// counts, on each server, the clients connected: one, shared by all the
// resources on it.
func TestOneConnectionPerSystem(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	servers := []*server.Server{natsServer(t, 0), natsServer(t, 0), natsServer(t, 0)}
	const perSystem = 12
	var streams []*v1alpha1.Stream
	for i, s := range servers {
		for k := range perSystem {
			st := newStream(ns, fmt.Sprintf("s%d-%d", i, k), at(serverURL(s)))
			create(t, st)
			streams = append(streams, st)
		}
	}
	for _, st := range streams {
		jsReady(t, st, metav1.ConditionTrue, "Synced")
	}
	for i, s := range servers {
		// Counted before this test's own client connects below.
		if n := s.NumClients(); n != 1 {
			t.Fatalf("system %d has %d client connections for %d resources, want 1", i, n, perSystem)
		}
		names := testnats.JetStream(t, s).StreamNames(ctx(t))
		n := 0
		for range names.Name() {
			n++
		}
		if n != perSystem {
			t.Fatalf("system %d holds %d streams, want %d", i, n, perSystem)
		}
	}
}

// clusterAt makes a NatsCluster whose status says it is available, with
// one server pod whose client port is a test server, as the NatsCluster
// controller would once its pods are ready. The operator dials the pod's
// address, never the Service's name (TestClusterConnectionsReachOnlyTheClustersPods).
func clusterAt(t *testing.T, ns, name string, s *server.Server, allowed ...string) {
	t.Helper()
	c := natsCluster(ns, name, func(sp *v1alpha1.NatsClusterSpec) {
		sp.Auth.Mode = v1alpha1.AuthNone
		sp.JetStream.AllowedNamespaces = allowed
	})
	create(t, c)
	serversReady(t, c)
	readyCondition(t, c, metav1.ConditionTrue, v1alpha1.ReasonReady)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	get(t, sts)
	ip := loopbackNet() + "1"
	mapHost(t, net.JoinHostPort(ip, fmt.Sprint(render.ClientPort)), s.Addr().String())
	serverPod(t, c, name+"-0", "r1", ip, sts)
}

func TestCrossNamespaceReferenceNeedsPermission(t *testing.T) {
	t.Parallel()
	home := namespace(t)
	other := namespace(t)
	s := natsServer(t, 0)
	clusterAt(t, home, "shared", s, other)
	strict := namespace(t)
	clusterAt(t, strict, "private", s)

	allowed := newStream(other, "allowed", v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Namespace: home, Name: "shared"}})
	create(t, allowed)
	jsReady(t, allowed, metav1.ConditionTrue, "Synced")

	denied := newStream(other, "denied", v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Namespace: strict, Name: "private"}})
	create(t, denied)
	jsReady(t, denied, metav1.ConditionFalse, "NotAllowed")

	local := newStream(strict, "local", v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "private"}})
	create(t, local)
	jsReady(t, local, metav1.ConditionTrue, "Synced")
}

// TestCrossNamespaceRefusalIsTheSameForAMissingCluster: naming, from
// another namespace, a NatsCluster that does not let it in reads exactly
// as naming one that does not exist (reason and message, the name aside),
// so a tenant cannot probe other namespaces for clusters. Careless
// variant caught: today's main, which answered ClusterNotFound "does not
// exist" for the missing one and NotAllowed for the other.
func TestCrossNamespaceRefusalIsTheSameForAMissingCluster(t *testing.T) {
	t.Parallel()
	strict, other := namespace(t), namespace(t)
	clusterAt(t, strict, "private", natsServer(t, 0))
	var messages []string
	for _, name := range []string{"private", "ghost"} {
		st := newStream(other, "to-"+name, v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Namespace: strict, Name: name}})
		create(t, st)
		jsReady(t, st, metav1.ConditionFalse, "NotAllowed")
		ready := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.ConditionReady)
		messages = append(messages, strings.ReplaceAll(ready.Message, name, "NAME"))
	}
	if messages[0] != messages[1] {
		t.Errorf("the refusals tell the clusters apart: %q and %q", messages[0], messages[1])
	}
}

func TestTwoNatsSystemsAtOnce(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	a, b := natsServer(t, 0), natsServer(t, 0)
	sa := newStream(ns, "same-name", at(serverURL(a)), func(sp *v1alpha1.StreamSpec) { sp.Description = "on a" })
	sb := newStream(ns, "same-name-b", at(serverURL(b)), func(sp *v1alpha1.StreamSpec) { sp.Name = "same-name"; sp.Description = "on b" })
	create(t, sa)
	create(t, sb)
	jsReady(t, sa, metav1.ConditionTrue, "Synced")
	jsReady(t, sb, metav1.ConditionTrue, "Synced")
	for s, want := range map[*server.Server]string{a: "on a", b: "on b"} {
		cfg, err := serverStream(t, testnats.JetStream(t, s), "same-name")
		if err != nil || cfg.Description != want {
			t.Fatalf("stream on %s: %q (%v), want %q", s.Addr(), cfg.Description, err, want)
		}
	}
}
