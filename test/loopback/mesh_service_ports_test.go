package loopback

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestIstioOutboundFollowsServicePorts: a client's sidecar has listeners
// for a pod only on the ports of the headless Service that selects it,
// with that port's protocol, not on the pod's container ports. With the
// route port left off the Service, meshed servers route to each other
// in plaintext (Envoy's passthrough), which STRICT refuses; with the
// client port declared without a protocol, a meshed NATS client hangs
// (its sidecar waits for the first bytes to sniff, the server waits to
// speak first) while a client that speaks first is served. Once the
// Service declares both as TCP, the routes come back in mTLS and the
// NATS client connects. Seen failing against the careless model that
// takes every port of a pod for a declared TCP port of its headless
// Service (as the model did before, from the container ports): the
// routes stayed up in mTLS under STRICT.
func TestIstioOutboundFollowsServicePorts(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns := meshNamespace(t, c, "mesh-service-ports")
	svc := &corev1.Service{}
	must(t, c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "nats"}, svc))
	svc.Spec.Ports = []corev1.ServicePort{{Name: "client", Port: 4222}, {Name: "http-monitor", Port: 8222}}
	must(t, c.Client.Update(ctx, svc))
	must(t, c.Client.Create(ctx, meshStatefulSet(ns, 2, true)))
	readyPod(t, c, ns, "nats-0", 0)
	readyPod(t, c, ns, "nats-1", 0)
	setPeerAuthentication(t, c, ns, "STRICT", nil)
	servers := []string{"nats-0", "nats-1"}
	none := map[string][]string{"nats-0": nil, "nats-1": nil}
	eventuallyServerRoutes(t, c, ns, servers, none)
	holdServerRoutes(t, c, ns, servers, none)

	addr := c.PodIP(ns, "nats-0") + ":4222"
	began := time.Now()
	if nc, err := meshedNATS(t, c, "nats://"+addr); err == nil {
		nc.Close()
		t.Fatal("a meshed NATS client connected through a port of no declared protocol: its sidecar must wait to sniff")
	} else if !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("a meshed NATS client on an undeclared port: %v, want a timeout (a hang, not a refusal)", err)
	}
	t.Logf("a meshed NATS client on an undeclared port gave up after %s", time.Since(began).Round(time.Millisecond))
	conn, err := meshDialer(t, c).Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Write([]byte("PING\r\n"))
	must(t, err)
	if line, err := bufio.NewReader(conn).ReadString('\n'); !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("a meshed client that speaks first on an undeclared port: %q, %v; want INFO", line, err)
	}

	must(t, c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "nats"}, svc))
	svc.Spec.Ports = []corev1.ServicePort{{Name: "client", Port: 4222, AppProtocol: ptr.To("tcp")},
		{Name: "tcp-cluster", Port: 6222}, {Name: "http-monitor", Port: 8222}}
	must(t, c.Client.Update(ctx, svc))
	eventuallyServerRoutes(t, c, ns, servers, map[string][]string{"nats-0": {"nats-1"}, "nats-1": {"nats-0"}})
	eventually(t, func() error {
		nc, err := meshedNATS(t, c, "nats://"+addr)
		if err == nil {
			nc.Close()
		}
		return err
	})
}
