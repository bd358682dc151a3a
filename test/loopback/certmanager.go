package loopback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// CertManagerNamespace holds the Secrets of ClusterIssuers (cert-manager's
// cluster resource namespace); it exists whenever cert-manager runs.
const CertManagerNamespace = "cert-manager"

// certManagerStartTimeout bounds the wait for the controllers' informers.
const certManagerStartTimeout = time.Minute

// certManager is cert-manager's controller process (hack/certmanager, built
// by hack/build-cert-manager.sh into bin/cert-manager): the Certificate
// controllers, the CA and self-signed signers, the approver and the Issuer
// and ClusterIssuer readiness loops. There is no webhook (nothing defaults
// or validates cert-manager objects beyond their CRD schemas) and no
// cainjector.
type certManager struct {
	proc *process
	log  string
}

// startCertManager installs cert-manager's CRDs into the API server of env,
// creates the cluster resource namespace and runs the controllers as a user
// of system:masters, writing to logPath; it returns once their informers
// have synced.
func startCertManager(ctx context.Context, env *envtest.Environment, cfg *rest.Config, binDir, dir, logPath string, r *reaper) (*certManager, error) {
	bin := filepath.Join(binDir, "controller")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("cert-manager: %w (run hack/build-cert-manager.sh or `make test-bins`)", err)
	}
	if _, err := installAddOn(ctx, cfg, "cert-manager", filepath.Join(binDir, "crds"), CertManagerNamespace); err != nil {
		return nil, err
	}
	kubeconfigPath, err := adminKubeconfig(env, dir, "cert-manager")
	if err != nil {
		return nil, err
	}
	readyFile := filepath.Join(dir, "cert-manager.ready")
	_ = os.Remove(readyFile)
	args := []string{
		"--kubeconfig=" + kubeconfigPath,
		"--cluster-resource-namespace=" + CertManagerNamespace,
		"--ready-file=" + readyFile,
		// A failed issuance is retried after seconds, not cert-manager's
		// hour: a test that fixes an Issuer sees the Certificate follow.
		"--certificate-request-minimum-backoff-duration=5s",
		"--certificate-request-maximum-backoff-duration=1m",
		"-v=2",
	}
	cm := &certManager{log: logPath}
	if cm.proc, err = startProcess(r, bin, args, os.Environ(), dir, logPath, ""); err != nil {
		return nil, err
	}
	if err := cm.waitReady(ctx, readyFile); err != nil {
		cm.stop()
		return nil, err
	}
	return cm, nil
}

func (cm *certManager) waitReady(ctx context.Context, readyFile string) error {
	ctx, cancel := context.WithTimeout(ctx, certManagerStartTimeout)
	defer cancel()
	for {
		if _, err := os.Stat(readyFile); err == nil {
			return nil
		}
		select {
		case <-cm.proc.done:
			return fmt.Errorf("cert-manager's controller exited (%v):\n%s", cm.proc.state, tail(cm.log, 30))
		case <-ctx.Done():
			return fmt.Errorf("cert-manager's controllers did not sync within %s:\n%s", certManagerStartTimeout, tail(cm.log, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (cm *certManager) stop() {
	if cm != nil && cm.proc != nil {
		cm.proc.stop(syscall.SIGTERM, 10*time.Second)
	}
}

// CertManager is cert-manager's controllers beside an envtest environment
// that has no loopback cluster around it (Options.CertManager is the way
// for a loopback cluster).
type CertManager struct {
	cm     *certManager
	reaper *reaper
	dir    string
}

// RunCertManager installs cert-manager's CRDs into the started env and runs
// cert-manager's controllers against it until Stop. binDir holds controller
// and crds/ (<repository>/bin/cert-manager when empty).
func RunCertManager(ctx context.Context, env *envtest.Environment, binDir string) (_ *CertManager, err error) {
	if env.Config == nil {
		return nil, errors.New("RunCertManager: the envtest environment is not started")
	}
	if binDir == "" {
		root, err := findRepoRoot()
		if err != nil {
			return nil, err
		}
		binDir = filepath.Join(root, "bin", "cert-manager")
	}
	c := &CertManager{}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.dir, err = os.MkdirTemp("", "kubenats-cert-manager-"); err != nil {
		return nil, err
	}
	if c.reaper, err = startReaper(); err != nil {
		return nil, err
	}
	c.cm, err = startCertManager(ctx, env, env.Config, binDir, c.dir, filepath.Join(c.dir, "cert-manager.log"), c.reaper)
	return c, err
}

// Log is what the controllers wrote (until Stop removes it).
func (c *CertManager) Log() string {
	data, _ := os.ReadFile(filepath.Join(c.dir, "cert-manager.log"))
	return string(data)
}

// Stop ends the controllers and removes their directory. It is safe to
// call more than once.
func (c *CertManager) Stop() {
	c.cm.stop()
	c.cm = nil
	if c.reaper != nil {
		c.reaper.stop()
		c.reaper = nil
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
		c.dir = ""
	}
}

// CertManagerLog is what cert-manager's controllers wrote (empty unless
// Options.CertManager).
func (c *Cluster) CertManagerLog() string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "logs", "cert-manager.log"))
	return string(data)
}
