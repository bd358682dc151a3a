package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubenats/kubenats/test/loopback"
)

// Options shape a real node. The zero value works from anywhere in the
// repository once `make test-bins` and `make node-images` ran.
type Options struct {
	// RepoRoot holds bin/ and config/; found from the working directory
	// when empty.
	RepoRoot string
	// Scheme of Node.Client; client-go's built-in kinds when nil.
	Scheme *runtime.Scheme
	// CRDDirectoryPaths are installed at start; none when empty (an
	// install applied as shipped brings its own).
	CRDDirectoryPaths []string
	// Volumes is how many local PersistentVolumes the node offers
	// (8 when zero), each a directory of the node's.
	Volumes int
}

// Node is a running single-node cluster.
type Node struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Client talks to the API server directly, with no cache.
	Client client.Client
	// Kubernetes is a client-go clientset for the same user.
	Kubernetes kubernetes.Interface
	// Dir holds everything on disk; logs/ the components' output.
	Dir string
	// BringUp is how long each step of the start took, in order.
	BringUp []string

	opts  Options
	plane *loopback.ControlPlane
	procs []*process // in start order; stopped in reverse
	diary *os.File
}

// Unusable says why this machine cannot run a real node ("" when it can):
// the kubelet and containerd need root and cgroups.
func Unusable() string {
	if os.Geteuid() != 0 {
		return "the real node needs root (a kubelet, containerd, mounts, a bridge, iptables)"
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return ""
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		return "the real node needs cgroups: neither v2 nor v1's memory controller is mounted at /sys/fs/cgroup"
	}
	return ""
}

// Dir is where the node keeps everything: fixed, so that a later run
// finds what a killed one left.
func dirPath() string { return filepath.Join(os.TempDir(), "kubenats-realnode") }

// New starts a real node; Stop ends it and removes all it made.
func New(ctx context.Context, o Options) (_ *Node, err error) {
	if why := Unusable(); why != "" {
		return nil, errors.New(why)
	}
	if o.RepoRoot == "" {
		if o.RepoRoot, err = RepoRoot(); err != nil {
			return nil, err
		}
	}
	if o.Scheme == nil {
		o.Scheme = clientgoscheme.Scheme
	}
	if o.Volumes == 0 {
		o.Volumes = 8
	}
	n := &Node{opts: o, Dir: dirPath()}
	if err := sweep(n.Dir, func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "realnode: a previous run's leftovers: "+f+"\n", a...)
	}); err != nil {
		return nil, err
	}
	for _, d := range []string{"logs", "apiserver", "cni/net.d", "cni/ipam", "containerd", "kubelet", "pod-logs", "volumes"} {
		if err := os.MkdirAll(filepath.Join(n.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := saveSysctls(n.Dir); err != nil {
		return nil, err
	}
	if n.diary, err = os.Create(filepath.Join(n.Dir, "logs", "node.log")); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	if err := n.checkBinaries(); err != nil {
		return nil, err
	}
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"bridge and cgroups", n.prepareHost},
		{"control plane", n.startControlPlane},
		{"containerd", n.startContainerd},
		{"images imported", n.importImages},
		{"kubelet, node Ready", n.startKubelet},
		{"kube-scheduler", n.startScheduler},
		{"kube-proxy, Services answer", n.startKubeProxy},
		{"CoreDNS, names answer", n.startCoreDNS},
		{"storage", n.addStorage},
	}
	for _, s := range steps {
		began := time.Now()
		if err := s.run(ctx); err != nil {
			return nil, fmt.Errorf("real node, %s: %w", s.name, err)
		}
		n.BringUp = append(n.BringUp, fmt.Sprintf("%s %s", s.name, time.Since(began).Round(time.Millisecond)))
		n.logf("%s after %s", s.name, time.Since(began).Round(time.Millisecond))
	}
	return n, nil
}

func (n *Node) logf(format string, args ...any) {
	if n.diary != nil {
		fmt.Fprintf(n.diary, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

func (n *Node) bin(name string) string { return filepath.Join(n.opts.RepoRoot, "bin", "node", name) }
func (n *Node) logPath(name string) string {
	return filepath.Join(n.Dir, "logs", name+".log")
}

// checkBinaries names what `make test-bins` should have put in place.
func (n *Node) checkBinaries() error {
	var missing []string
	for _, b := range []string{"kubelet", "kube-scheduler", "kube-proxy", "coredns"} {
		if _, err := os.Stat(n.bin(b)); err != nil {
			missing = append(missing, "bin/node/"+b+" (hack/build-node-bins.sh)")
		}
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b+" (hack/install-node-packages.sh)")
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		missing = append(missing, "/usr/lib/cni/bridge (hack/install-node-packages.sh)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing, run `make test-bins`: %s", strings.Join(missing, ", "))
	}
	return nil
}

// prepareHost makes the bridge with the node's address (the API server
// listens on it before any pod exists) and the cgroup root in every
// hierarchy (the kubelet refuses a --cgroup-root that is not there).
func (n *Node) prepareHost(context.Context) error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", nodeIP + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	resolv := "nameserver " + clusterDNS + "\n"
	if err := os.WriteFile(filepath.Join(n.Dir, "resolv.conf"), []byte(resolv), 0o644); err != nil {
		return err
	}
	for _, d := range cgroupDirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(d)) == "cpuset" {
			// A v1 cpuset cgroup takes no process until it has CPUs and memory nodes.
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				v, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// startControlPlane runs the loopback cluster's control plane on the
// bridge's address, with the node's certificates, the ServiceAccount
// admission plugin (envtest turns it off: pods get their tokens here) and
// every controller but node IPAM (the CNI configuration holds the pods'
// range).
func (n *Node) startControlPlane(ctx context.Context) error {
	certDir := filepath.Join(n.Dir, "apiserver")
	ca, err := writeAPIServerPKI(certDir,
		[]net.IP{net.ParseIP(nodeIP), net.ParseIP(apiServerIP), net.ParseIP("127.0.0.1")},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return err
	}
	n.plane, err = loopback.StartControlPlane(ctx, loopback.ControlPlaneOptions{
		Options: loopback.Options{RepoRoot: n.opts.RepoRoot, CRDDirectoryPaths: n.opts.CRDDirectoryPaths},
		Dir:     n.Dir,
		Configure: func(env *envtest.Environment) {
			env.ErrorIfCRDPathMissing = len(n.opts.CRDDirectoryPaths) > 0
			api := env.ControlPlane.GetAPIServer()
			api.CertDir = certDir
			api.SecureServing.Address = nodeIP
			api.SecureServing.Port = strconv.Itoa(apiPort)
			api.SecureServing.CA = ca
			args := api.Configure()
			args.Set("advertise-address", nodeIP)
			args.Set("service-cluster-ip-range", serviceCIDR)
			args.Set("service-account-issuer", "https://kubernetes.default.svc.cluster.local")
			args.Disable("disable-admission-plugins")
		},
		Controllers: "*,-node-ipam-controller",
		ControllerManagerArgs: []string{
			"--service-account-private-key-file=" + filepath.Join(certDir, saKeyFile),
			"--root-ca-file=" + filepath.Join(certDir, caFile),
			"--service-cluster-ip-range=" + serviceCIDR,
		},
	})
	if err != nil {
		return err
	}
	n.Config = rest.CopyConfig(n.plane.Config)
	if n.Client, err = client.New(n.Config, client.Options{Scheme: n.opts.Scheme}); err != nil {
		return err
	}
	n.Kubernetes, err = kubernetes.NewForConfig(n.Config)
	return err
}

// AdminKubeconfig writes a kubeconfig of an administrator (for a tool
// the tests run, such as Helm) and returns its path.
func (n *Node) AdminKubeconfig(name string) (string, error) { return n.kubeconfig(name) }

// kubeconfig writes an admin kubeconfig for a component of the node.
func (n *Node) kubeconfig(component string) (string, error) {
	return n.plane.Kubeconfig(component, "realnode:"+component, []string{"system:masters"})
}

// start runs a component with its output in logs/<name>.log.
func (n *Node) start(name, path string, args ...string) (*process, error) {
	p, err := start(name, n.logPath(name), path, args...)
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	return p, nil
}

// until polls check every 100 ms until it passes, p exits (its log's end
// in the error) or timeout passes.
func (n *Node) until(ctx context.Context, p *process, timeout time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if exited := p.exited(); exited != nil {
			return exited
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s (last: %v); %s's log ends:\n%s", what, timeout, err, p.name, tail(p.log, 30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Log is what the component name (kubelet, containerd, kube-proxy,
// kube-scheduler, coredns, kube-controller-manager, node) wrote.
func (n *Node) Log(name string) string {
	data, _ := os.ReadFile(n.logPath(name))
	return string(data)
}

// Stop ends every process, container and mount of the node and removes
// what it made (sweep). Safe to call more than once; a failure to clean
// is printed, as a test cleanup has nowhere else to put it.
func (n *Node) Stop() {
	for i := len(n.procs) - 1; i >= 0; i-- {
		n.procs[i].stop(5 * time.Second)
	}
	n.procs = nil
	if n.plane != nil {
		n.plane.Stop()
		n.plane = nil
	}
	if n.diary != nil {
		_ = n.diary.Close()
		n.diary = nil
	}
	if n.Dir == "" {
		return
	}
	// The logs outlive the node, for a look after a failure.
	kept := n.Dir + "-logs"
	_ = os.RemoveAll(kept)
	_ = os.Rename(filepath.Join(n.Dir, "logs"), kept)
	if err := sweep(n.Dir, func(f string, a ...any) { fmt.Fprintf(os.Stderr, "realnode: stop: "+f+"\n", a...) }); err != nil {
		fmt.Fprintln(os.Stderr, "realnode:", err)
	}
	n.Dir = ""
}

// RepoRoot is the nearest directory above the working directory that
// holds a go.mod: the repository, for a test run inside it.
func RepoRoot() (string, error) {
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
			return "", errors.New("realnode: no go.mod above the working directory; set Options.RepoRoot")
		}
		dir = parent
	}
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
