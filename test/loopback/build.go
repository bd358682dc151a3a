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
	if repoRoot == "" {
		root, err := findRepoRoot()
		if err != nil {
			return err
		}
		repoRoot = root
	}
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "build-nats-servers.sh"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/build-nats-servers.sh: %w", err)
	}
	return nil
}
