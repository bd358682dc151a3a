package loopback

import (
	"context"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// planeExtras are what a control plane started alone (StartControlPlane)
// changes in the loopback cluster's: the zero value is the loopback
// cluster's own.
type planeExtras struct {
	configure   func(*envtest.Environment)
	controllers string
	kcmArgs     []string
}

func startControlPlane(ctx context.Context, o Options, dir string, r *reaper, log *fileLog) (*controlPlane, error) {
	return startControlPlaneWith(ctx, o, dir, r, log, planeExtras{})
}

// ControlPlaneOptions shape a control plane started alone, for a harness
// that brings its own node (test/realnode: a real kubelet and container
// runtime).
type ControlPlaneOptions struct {
	// Options gives RepoRoot, KubernetesBinaries and CRDDirectoryPaths
	// (defaulted as for a loopback cluster); the rest is not read.
	Options
	// Dir receives the logs (logs/) and kubeconfigs; it must exist.
	Dir string
	// Configure changes the envtest environment before it starts: the API
	// server's flags and certificate directory.
	Configure func(*envtest.Environment)
	// Controllers is kube-controller-manager's --controllers; the loopback
	// cluster's set when empty.
	Controllers string
	// ControllerManagerArgs are added to kube-controller-manager's flags.
	ControllerManagerArgs []string
}

// ControlPlane is kube-apiserver, etcd and kube-controller-manager, as the
// loopback cluster runs them, with no kubelet.
type ControlPlane struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Env is the envtest environment of the API server and etcd.
	Env *envtest.Environment

	plane  *controlPlane
	reaper *reaper
	log    *fileLog
	dir    string
}

// StartControlPlane starts a control plane; Stop ends it. Its processes
// are killed and etcd's data removed should the calling process die
// first, as a loopback cluster's are.
func StartControlPlane(ctx context.Context, o ControlPlaneOptions) (_ *ControlPlane, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	p := &ControlPlane{dir: o.Dir}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	if p.log, err = openFileLog(filepath.Join(o.Dir, "logs", "control-plane.log")); err != nil {
		return nil, err
	}
	if p.reaper, err = startReaper(); err != nil {
		return nil, err
	}
	x := planeExtras{configure: o.Configure, controllers: o.Controllers, kcmArgs: o.ControllerManagerArgs}
	if p.plane, err = startControlPlaneWith(ctx, o.Options, o.Dir, p.reaper, p.log, x); err != nil {
		return nil, err
	}
	p.Env = p.plane.env
	p.Config = rest.CopyConfig(p.plane.cfg)
	return p, nil
}

// Kubeconfig writes, to <Dir>/<name>.kubeconfig, a kubeconfig that
// authenticates as user in groups by client certificate, and returns its
// path.
func (p *ControlPlane) Kubeconfig(name, user string, groups []string) (string, error) {
	return writeKubeconfig(p.plane.env, p.dir, name, envtest.User{Name: user, Groups: groups})
}

// Stop ends the controller manager, the API server and etcd; it is safe
// to call more than once.
func (p *ControlPlane) Stop() {
	if p.plane != nil {
		p.plane.stop(p.reaper)
		p.plane = nil
	}
	if p.reaper != nil {
		p.reaper.stop()
		p.reaper = nil
	}
	if p.log != nil {
		p.log.close()
		p.log = nil
	}
}
