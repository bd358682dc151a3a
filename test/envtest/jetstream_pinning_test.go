package envtest_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestClusterConnectionsReachOnlyTheClustersPods: a Stream naming a
// NatsCluster is made on that cluster's own server pod, though the
// cluster's Service name leads to another server (a tenant who may write
// EndpointSlices in its namespace can add any address to its Service,
// say another tenant's server, which admits the operator) and a pod that
// only wears the cluster's labels stands at a third. Neither of those
// two ever gets the stream, held over a window. Careless variants caught:
// today's main, which dialled the Service name (the stream lands on the
// steered server), and pinning to pods by label alone (the impostor's
// server may get it).
func TestClusterConnectionsReachOnlyTheClustersPods(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	own, steered, impostor := natsServer(t, 0), natsServer(t, 0), natsServer(t, 0)
	clusterAt(t, ns, "nats", own)
	mapHost(t, fmt.Sprintf("nats.%s.svc:%d", ns, render.ClientPort), steered.Addr().String())
	c := natsCluster(ns, "nats")
	ip := loopbackNet() + "9"
	mapHost(t, net.JoinHostPort(ip, fmt.Sprint(render.ClientPort)), impostor.Addr().String())
	serverPod(t, c, "impostor", "r1", ip, nil)

	st := newStream(ns, "pinned", v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "nats"}})
	create(t, st)
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	if _, err := serverStream(t, testnats.JetStream(t, own), "pinned"); err != nil {
		t.Fatalf("the cluster's own server has no stream: %v", err)
	}
	poll.Holds(t, 3*time.Second, func() error {
		for name, s := range map[string]*server.Server{"the Service's steered endpoint": steered, "the impostor pod": impostor} {
			if _, err := serverStream(t, testnats.JetStream(t, s), "pinned"); err == nil {
				return fmt.Errorf("%s got the stream", name)
			}
		}
		return nil
	})
}
