package bench

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cacheFloorRSS is the floor of the operator's peak RSS (b): the peak of
// cachefloor, a controller-runtime manager caching the same kinds and
// doing nothing else, once it has listed what the API server holds.
func cacheFloorRSS(b testing.TB, root, kubeconfig string) float64 {
	b.Helper()
	binary := filepath.Join(root, "bin", "cachefloor")
	build := exec.Command("go", "build", "-o", binary, "./test/bench/cachefloor")
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	cmd := exec.Command(binary, "--kubeconfig", kubeconfig)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	synced := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if lines.Text() == "synced" {
				synced <- true
				return
			}
		}
		synced <- false
	}()
	select {
	case ok := <-synced:
		if !ok {
			b.Fatal("cachefloor ended before its caches synced")
		}
	case <-time.After(2 * time.Minute):
		b.Fatal("cachefloor's caches did not sync within 2 minutes")
	}
	return procStatus(b, "cachefloor", cmd.Process.Pid, "VmHWM:")
}
