package loopback

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controlPlane is kube-apiserver and etcd (envtest) and
// kube-controller-manager, which envtest does not run: the StatefulSet,
// garbage collection, claim protection, node lifecycle and the other
// controllers a real cluster has.
type controlPlane struct {
	env         *envtest.Environment
	envPIDs     []int
	cfg         *rest.Config
	kcm         *process
	kcmLog      string
	kcmStopWait time.Duration
}

// kcmControllers: every default controller but those that need what this
// cluster does not have: a service account signing key
// (serviceaccount-token), a pod CIDR (node-ipam), and pod addresses outside
// loopback: the API server refuses 127.0.0.0/8 in Endpoints and
// EndpointSlices, so those controllers would only fail and retry (the
// harness's Dial routes to Services from the pods instead). Controller
// names in 1.37 end in -controller; an unknown name stops the controller
// manager at once.
const kcmControllers = "*,-serviceaccount-token-controller,-node-ipam-controller," +
	"-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller"

func startControlPlaneWith(ctx context.Context, o Options, dir string, r *reaper, log *fileLog, x planeExtras) (*controlPlane, error) {
	cp := &controlPlane{
		env: &envtest.Environment{
			CRDDirectoryPaths:     o.CRDDirectoryPaths,
			ErrorIfCRDPathMissing: true,
			BinaryAssetsDirectory: o.KubernetesBinaries,
		},
		kcmStopWait: 10 * time.Second,
	}
	if x.configure != nil {
		x.configure(cp.env)
	}
	began := time.Now()
	cfg, err := cp.env.Start()
	if err != nil {
		_ = cp.env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s (run `make test-bins` first): %w", o.KubernetesBinaries, err)
	}
	cp.cfg = cfg
	// envtest starts them without Pdeathsig: the reaper stands in.
	cp.envPIDs = childrenNamed("etcd", "kube-apiserver")
	for _, pid := range cp.envPIDs {
		r.watch(pid)
	}
	// envtest removes its directories in Stop, which a killed test never
	// reaches.
	r.removeAtExit(cp.env.ControlPlane.Etcd.DataDir)
	r.removeAtExit(cp.env.ControlPlane.APIServer.CertDir)
	log.printf("kube-apiserver and etcd up in %s", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	if err := cp.startControllerManager(ctx, o, dir, r, x); err != nil {
		cp.stop(r)
		return nil, err
	}
	log.printf("kube-controller-manager running its controllers after %s", time.Since(began).Round(time.Millisecond))
	return cp, nil
}

func (cp *controlPlane) startControllerManager(ctx context.Context, o Options, dir string, r *reaper, x planeExtras) error {
	kubeconfigPath, err := adminKubeconfig(cp.env, dir, "kube-controller-manager")
	if err != nil {
		return err
	}
	cp.kcmLog = filepath.Join(dir, "logs", "kube-controller-manager.log")
	args := []string{
		"--kubeconfig=" + kubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--controllers=" + cmp.Or(x.controllers, kcmControllers),
	}
	args = append(args, x.kcmArgs...)
	bin := filepath.Join(o.KubernetesBinaries, "kube-controller-manager")
	cp.kcm, err = startProcess(r, bin, args, os.Environ(), dir, cp.kcmLog, "")
	if err != nil {
		return err
	}
	return cp.waitForControllers(ctx)
}

// waitForControllers returns once the controller manager acts: its root CA
// publisher writes kube-root-ca.crt into every namespace, default included,
// at the same time as the other controllers start.
func (cp *controlPlane) waitForControllers(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(cp.cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		_, err := cs.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-cp.kcm.done:
			return fmt.Errorf("kube-controller-manager exited (%v):\n%s", cp.kcm.state, tail(cp.kcmLog, 30))
		case <-ctx.Done():
			return fmt.Errorf("kube-controller-manager did not start its controllers within 2m (last: %v):\n%s", err, tail(cp.kcmLog, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop ends the controller manager, then the API server and etcd.
func (cp *controlPlane) stop(r *reaper) {
	if cp.kcm != nil {
		cp.kcm.stop(syscall.SIGTERM, cp.kcmStopWait)
	}
	if err := cp.env.Stop(); err == nil {
		for _, pid := range cp.envPIDs {
			r.forget(pid)
		}
	}
}

// tail is the last n lines of a file, for error messages.
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
