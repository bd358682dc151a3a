package loopback

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
)

// BuildNatsServers runs hack/build-nats-servers.sh, which builds the
// nats-server versions the tests run into bin/nats-server once, and
// returns at once when they are there. repoRoot "" finds the repository
// from the working directory. The script's progress goes to out.
func BuildNatsServers(repoRoot string, out io.Writer) error {
	return runBuildScript(repoRoot, "build-nats-servers.sh", out)
}

// BuildCertManager runs hack/build-cert-manager.sh, which builds
// cert-manager's controllers and places its CRDs into bin/cert-manager once
// (about 2 minutes), for Options.CertManager and RunCertManager.
func BuildCertManager(repoRoot string, out io.Writer) error {
	return runBuildScript(repoRoot, "build-cert-manager.sh", out)
}

func runBuildScript(repoRoot, script string, out io.Writer) error {
	if repoRoot == "" {
		root, err := findRepoRoot()
		if err != nil {
			return err
		}
		repoRoot = root
	}
	cmd := exec.Command(filepath.Join(repoRoot, "hack", script))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/%s: %w", script, err)
	}
	return nil
}

// BuildIstio runs hack/build-istio.sh, which builds Istio's sidecar
// injector and places Istio's CRDs into bin/istio once (about 3 minutes),
// for Options.Istio.
func BuildIstio(repoRoot string, out io.Writer) error {
	return runBuildScript(repoRoot, "build-istio.sh", out)
}
