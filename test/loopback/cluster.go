package loopback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options shape a loopback cluster. The zero value works from anywhere in
// the repository once `make test-bins` and hack/build-nats-servers.sh ran.
type Options struct {
	// RepoRoot holds bin/ and config/; found from the working directory
	// (the directory with go.mod) when empty.
	RepoRoot string
	// KubernetesBinaries holds kube-apiserver, etcd and
	// kube-controller-manager; <RepoRoot>/bin/k8s when empty.
	KubernetesBinaries string
	// NatsServerBinaries holds <version>/nats-server;
	// <RepoRoot>/bin/nats-server when empty.
	NatsServerBinaries string
	// CRDDirectoryPaths are installed at start; <RepoRoot>/config/crd/bases
	// when empty.
	CRDDirectoryPaths []string
	// Scheme of Cluster.Client; client-go's built-in kinds when nil.
	Scheme *runtime.Scheme
	// NodeName of the one node; "loopback" when empty.
	NodeName string
	// Zones, when set, make the node one node per zone, named
	// <NodeName>-<zone> and labelled topology.kubernetes.io/zone=<zone>
	// (region "loopback"), all run by the one kubelet. Pods are bound as
	// the scheduler's topology spread scoring would (zones.go).
	Zones []string
	// CertManager runs cert-manager's controllers against the cluster
	// (certmanager.go): its CRDs installed, the cert-manager namespace for
	// ClusterIssuers' Secrets, real issuance and renewal by the CA and
	// self-signed issuers. Needs hack/build-cert-manager.sh (BuildCertManager).
	CertManager bool
	// CertManagerBinaries holds cert-manager's controller and crds/;
	// <RepoRoot>/bin/cert-manager when empty.
	CertManagerBinaries string
	// ConfigRefreshDelay is the shortest delay before a running pod sees a
	// change of its ConfigMap and Secret volumes; each pod waits between it
	// and twice it (DefaultConfigRefreshDelay when zero). A real kubelet
	// takes up to its sync period, about a minute: this is shorter only to
	// keep tests short, and never zero, so that whatever reloads the
	// servers has to cope with files that change late.
	ConfigRefreshDelay time.Duration
	// Istio runs the mesh model (mesh*.go) with Istio's own sidecar
	// injector as the API server's mutating webhook, Istio's CRDs, and
	// PeerAuthentications obeyed by the sidecars (istio.go). Needs
	// hack/build-istio.sh.
	Istio bool
	// IstioBinaries holds inject and crds/; <RepoRoot>/bin/istio when empty.
	IstioBinaries string
	// KubenatsBinary is the operator's binary (`go build ./cmd/kubenats`,
	// BuildKubenats): with it the kubelet runs the containers of the
	// operator's image (the metrics container, `kubenats exporter`) as
	// processes beside the server, their pod-local addresses on the pod's
	// address (podlocal.go). Empty: they are reported running without
	// running.
	KubenatsBinary string
	// KeepDir leaves the cluster's directory (logs, pod directories and
	// claim images, unmounted: `mount -o loop` one to look) in place after
	// Stop, for a look after a failure.
	KeepDir bool
}

// Cluster is a running loopback cluster.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Client talks to the API server directly, with no cache.
	Client client.Client
	// Kubernetes is a client-go clientset for the same user.
	Kubernetes kubernetes.Interface
	// Dir holds everything on disk: logs/, pods/, claims/ (each claim a
	// mounted filesystem of its size, its image in claim-images/).
	Dir string
	// Mesh is the sidecar mesh model when Options.Istio, else nil: its
	// Client is a workload of the test process inside the mesh.
	Mesh *Mesh

	opts    Options
	reaper  *reaper
	addrs   *addressBook
	log     *fileLog
	plane   *controlPlane
	certs   *certManager
	istio   *istiod
	kubelet *kubelet
	cancel  context.CancelFunc
	watches watchTuning
}

// Start runs a loopback cluster for the test and stops it when the test
// ends.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// New runs a loopback cluster; Stop ends it. For test mains and demos that
// have no testing.T.
func New(o Options) (_ *Cluster, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	c := &Cluster{opts: o}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.Dir, err = os.MkdirTemp("", "kubenats-loopback-"); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(c.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	if c.log, err = openFileLog(filepath.Join(c.Dir, "logs", "kubelet.log")); err != nil {
		return nil, err
	}
	if err := markOwner(c.Dir); err != nil {
		return nil, err
	}
	unmountOrphans(filepath.Dir(c.Dir), c.log.printf)
	if c.reaper, err = startReaper(); err != nil {
		return nil, err
	}
	if c.addrs, err = newAddressBook(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	began := time.Now()
	if c.plane, err = startControlPlane(ctx, o, c.Dir, c.reaper, c.log); err != nil {
		return nil, err
	}
	c.Config = rest.CopyConfig(c.plane.cfg)
	if c.Client, err = client.New(c.Config, client.Options{Scheme: o.Scheme}); err != nil {
		return nil, err
	}
	if c.Kubernetes, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	if o.CertManager {
		began := time.Now()
		logPath := filepath.Join(c.Dir, "logs", "cert-manager.log")
		if c.certs, err = startCertManager(ctx, c.plane.env, c.Config, o.CertManagerBinaries, c.Dir, logPath, c.reaper); err != nil {
			return nil, err
		}
		c.log.printf("cert-manager's controllers running after %s", time.Since(began).Round(time.Millisecond))
	}
	if o.Istio {
		if err := c.startIstio(ctx); err != nil {
			return nil, err
		}
	}
	c.kubelet = newKubelet(c.Kubernetes, o.NodeName, c.Dir, o.NatsServerBinaries, c.addrs, c.reaper, c.log)
	c.kubelet.nodes = zonedNodes(o.NodeName, o.Zones)
	if o.ConfigRefreshDelay > 0 {
		c.kubelet.refreshDelay = o.ConfigRefreshDelay
	}
	c.kubelet.kubenatsBinary = o.KubenatsBinary
	c.kubelet.useMesh(c.Mesh)
	if err := c.kubelet.start(ctx); err != nil {
		return nil, fmt.Errorf("starting the loopback kubelet: %w", err)
	}
	c.log.printf("cluster up in %s, pod addresses 127.0.%d.0/24", time.Since(began).Round(time.Millisecond), c.addrs.slot)
	return c, nil
}

// RepoRoot is the repository the cluster takes its binaries and CRDs from.
func (c *Cluster) RepoRoot() string { return c.opts.RepoRoot }

func (o *Options) defaults() error {
	if o.RepoRoot == "" {
		root, err := findRepoRoot()
		if err != nil {
			return err
		}
		o.RepoRoot = root
	}
	if o.KubernetesBinaries == "" {
		o.KubernetesBinaries = filepath.Join(o.RepoRoot, "bin", "k8s")
	}
	if o.NatsServerBinaries == "" {
		o.NatsServerBinaries = filepath.Join(o.RepoRoot, "bin", "nats-server")
	}
	if o.IstioBinaries == "" {
		o.IstioBinaries = filepath.Join(o.RepoRoot, "bin", "istio")
	}
	if o.CertManagerBinaries == "" {
		o.CertManagerBinaries = filepath.Join(o.RepoRoot, "bin", "cert-manager")
	}
	if len(o.CRDDirectoryPaths) == 0 {
		o.CRDDirectoryPaths = []string{filepath.Join(o.RepoRoot, "config", "crd", "bases")}
	}
	if o.Scheme == nil {
		o.Scheme = clientgoscheme.Scheme
	}
	if o.NodeName == "" {
		o.NodeName = "loopback"
	}
	return nil
}

func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("loopback: no go.mod above the working directory; set Options.RepoRoot")
		}
		dir = parent
	}
}

// Stop ends every process the cluster started: the servers first (at once,
// no lame duck), then cert-manager, the controller manager, API server and
// etcd. It is
// safe to call more than once.
func (c *Cluster) Stop() {
	if c.kubelet != nil {
		c.kubelet.stop()
		c.kubelet = nil
	}
	if c.cancel != nil {
		c.cancel()
	}
	if c.certs != nil {
		c.certs.stop()
		c.certs = nil
	}
	if c.istio != nil {
		c.istio.stop()
		c.istio = nil
	}
	if c.plane != nil {
		c.plane.stop(c.reaper)
		c.plane = nil
	}
	if c.reaper != nil {
		c.reaper.stop()
		c.reaper = nil
	}
	if c.addrs != nil {
		c.addrs.close()
		c.addrs = nil
	}
	if c.log != nil {
		c.log.close()
		c.log = nil
	}
	if c.Dir != "" && !c.opts.KeepDir {
		_ = os.RemoveAll(c.Dir)
	}
}

// PodIP is the address of the pod named ns/name now, "" while no pod of
// that name holds one (not created yet, or its process is gone). A pod
// re-created under the same name gets another address, as in a real
// cluster: look it up again after a replacement. Clients that must follow
// replacements dial the pod's DNS name through Dial.
func (c *Cluster) PodIP(ns, name string) string {
	return c.addrs.podAddress(types.NamespacedName{Namespace: ns, Name: name})
}

// HostAddress is an address of the harness's own range kept for name for
// the life of the cluster and never given to a pod: for a test's stand-in
// of a workload the kubelet does not run (a pod object it creates bound to
// another node, whose status names this address), listening on it itself.
func (c *Cluster) HostAddress(name string) (string, error) {
	return c.addrs.name("host/" + name)
}

// Kill sends sig to the nats-server process of pod ns/name, as a crash or
// an out-of-memory kill would arrive (SIGKILL), or an operator's hand.
// SIGSTOP freezes the server (a hang: the kernel still accepts its
// connections, nothing answers; its probes fail only after their
// timeouts), SIGCONT resumes it.
func (c *Cluster) Kill(ns, name string, sig syscall.Signal) error {
	return c.kubelet.signal(ns, name, sig)
}

// ServerLog is everything the nats-server processes of the pods named
// ns/name wrote, pod after pod (a StatefulSet reuses the name), each run
// introduced by a header line.
func (c *Cluster) ServerLog(ns, name string) string {
	paths, _ := filepath.Glob(filepath.Join(c.Dir, "logs", ns+"_"+name+"_*.log"))
	sort.Slice(paths, func(i, j int) bool { return modTime(paths[i]) < modTime(paths[j]) })
	var b strings.Builder
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		b.Write(data)
	}
	return b.String()
}

// KubeletLog is the loopback kubelet's own log: bindings, starts, probe
// verdicts, signals, deletions.
func (c *Cluster) KubeletLog() string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "logs", "kubelet.log"))
	return string(data)
}

// ControllerManagerLog is kube-controller-manager's output.
func (c *Cluster) ControllerManagerLog() string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "logs", "kube-controller-manager.log"))
	return string(data)
}

func modTime(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.ModTime().UnixNano()
}
