// Package peakrss runs a command and measures its peak resident memory:
// its VmHWM, read every 10 ms while it runs. (The rusage of a waited
// child is no measure of a command a Go test starts: Linux carries the
// parent's high-water mark across the exec of a vfork'd child.)
package peakrss

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Run starts cmd, waits for it, and returns its peak RSS in bytes with
// the error of its run. The last 10 ms of its life are not sampled.
func Run(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var peak int64
	for {
		if kib, ok := highWater(cmd.Process.Pid); ok {
			peak = max(peak, kib<<10)
		}
		select {
		case err := <-done:
			return peak, err
		case <-tick.C:
		}
	}
}

// highWater is a running process's VmHWM in KiB.
func highWater(pid int) (int64, bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
