package loopback

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The loopback cluster's Istio (Options.Istio): start-up and the test
// hooks of the mesh.

func (c *Cluster) startIstio(ctx context.Context) error {
	began := time.Now()
	mesh, err := newMesh(c.addrs, c.log.printf)
	if err != nil {
		return err
	}
	c.Mesh = mesh
	dir := filepath.Join(c.Dir, "istio")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(c.Dir, "logs", "istio-injector.log")
	if c.istio, err = startIstio(ctx, c.plane.env, c.Config, mesh, c.opts.IstioBinaries, dir, logPath, c.reaper); err != nil {
		return err
	}
	if err := runIstioControllers(ctx, c.Config, mesh); err != nil {
		return err
	}
	c.log.printf("Istio's injector and the mesh model running after %s", time.Since(began).Round(time.Millisecond))
	return nil
}

// IstioLog is what Istio's injector wrote (empty unless Options.Istio).
func (c *Cluster) IstioLog() string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "logs", "istio-injector.log"))
	return string(data)
}

// KillProxy crashes the istio-proxy of pod ns/name, as an Envoy that dies
// does: the pod stays injected and counted in the mesh (peers keep sending
// it mTLS), but nothing listens on its captured ports, so every connection
// to it and from its server is refused and the established ones are
// reset; its agent answers no probe, so the server turns unready. The
// kubelet starts the proxy again after down (its restart back-off), with
// the container's restart count raised.
func (c *Cluster) KillProxy(ns, name string, down time.Duration) error {
	if c.Mesh == nil {
		return fmt.Errorf("the loopback cluster runs without Istio")
	}
	return c.kubelet.onWorker(ns, name, func(w *podWorker) error { return w.killProxy(down) })
}

// MeshDialer is Cluster.Dial for a workload of the test process inside the
// mesh, service account sa of namespace ns: cluster DNS names resolved as
// Dial does, connections sent as that workload's sidecar would (mTLS to
// meshed pods). A client outside the mesh uses Cluster.Dial.
func (c *Cluster) MeshDialer(ns, sa string) (func(network, address string) (net.Conn, error), error) {
	if c.Mesh == nil {
		return nil, fmt.Errorf("the loopback cluster runs without Istio")
	}
	client, err := c.Mesh.Client(ns, sa)
	if err != nil {
		return nil, err
	}
	return func(network, address string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		address, err := c.clusterAddress(ctx, address)
		if err != nil {
			return nil, err
		}
		return client.Dial(network, address)
	}, nil
}

// MeshModeInForce is the mTLS mode the sidecar of pod ns/name enforces on
// port now, by the policies istiod last pushed it (which may differ from
// the PeerAuthentication objects for a moment); ok false while the pod
// has no sidecar.
func (c *Cluster) MeshModeInForce(ns, name string, port int32) (mode string, ok bool) {
	if c.Mesh == nil {
		return "", false
	}
	c.Mesh.mu.Lock()
	s := c.Mesh.workloads[types.NamespacedName{Namespace: ns, Name: name}]
	c.Mesh.mu.Unlock()
	if s == nil {
		return "", false
	}
	return string(s.mode(port)), true
}
