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

// BuildPrometheus runs hack/build-prometheus.sh, which builds the
// Prometheus server into bin/prometheus once (about 3 minutes), for the
// tests that scrape the cluster.
func BuildPrometheus(repoRoot string, out io.Writer) error {
	return runBuildScript(repoRoot, "build-prometheus.sh", out)
}

// BuildKubenats builds the operator's binary from the repository's
// current source into dir/kubenats, for Options.KubenatsBinary: the
// metrics containers run the code under test, never a stale bin/kubenats.
// The Go build cache makes a second build cheap.
func BuildKubenats(repoRoot, dir string, out io.Writer) (string, error) {
	if repoRoot == "" {
		root, err := findRepoRoot()
		if err != nil {
			return "", err
		}
		repoRoot = root
	}
	bin := filepath.Join(dir, "kubenats")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubenats")
	cmd.Dir, cmd.Stdout, cmd.Stderr = repoRoot, out, out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/kubenats: %w", err)
	}
	return bin, nil
}
