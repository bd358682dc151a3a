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

// cacheFloor runs cachefloor, a controller-runtime manager caching the
// same kinds as the operator and doing nothing else, until it has listed
// what the API server holds. Its peak RSS then is the floor of the
// operator's (b); the time from its start to its caches' sync is the part
// of a restart's recheck (h) that any such operator spends before it can
// look at one object.
func cacheFloor(b testing.TB, root, kubeconfig string) (rss float64, synced time.Duration) {
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
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	listed := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if lines.Text() == "synced" {
				listed <- true
				return
			}
		}
		listed <- false
	}()
	select {
	case ok := <-listed:
		if !ok {
			b.Fatal("cachefloor ended before its caches synced")
		}
		synced = time.Since(start)
	case <-time.After(2 * time.Minute):
		b.Fatal("cachefloor's caches did not sync within 2 minutes")
	}
	return procStatus(b, "cachefloor", cmd.Process.Pid, "VmHWM:"), synced
}
