package bench

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// operator is the kubenats manager running as its own process, so that its
// memory and its API requests are its own.
type operator struct {
	cmd     *exec.Cmd
	metrics string
}

func startOperator(b *testing.B, binary, kubeconfig string, metricsPort int) *operator {
	b.Helper()
	op := &operator{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}
	op.cmd = exec.Command(binary, "manager",
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--health-probe-bind-address", "0",
		"--jetstream-workers", "16",
		"--zap-log-level", "error",
		"--pprof-bind-address", os.Getenv("KUBENATS_BENCH_PPROF"))
	op.cmd.Stdout, op.cmd.Stderr = os.Stderr, os.Stderr
	op.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := op.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = op.cmd.Process.Kill(); _ = op.cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := op.requests(); err == nil {
			return op
		}
		if time.Now().After(deadline) {
			b.Fatal("the operator's metrics endpoint never answered")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// requests reads the operator's API requests so far, by HTTP method, from
// client-go's own counter.
func (op *operator) requests() (map[string]float64, error) {
	resp, err := http.Get(op.metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		method := between(line, `method="`, `"`)
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			out[method] += v
		}
	}
	return out, sc.Err()
}

// peakRSS is the process's high-water resident memory, in MiB.
func (op *operator) peakRSS() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", op.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

// delta sums the requests between two readings, for the given methods
// (all when none are named).
func delta(before, after map[string]float64, methods ...string) float64 {
	sum := 0.0
	for m, v := range after {
		if len(methods) == 0 || contains(methods, m) {
			sum += v - before[m]
		}
	}
	return sum
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// saveHeapProfile writes the operator's heap profile to
// $KUBENATS_BENCH_HEAP_PROFILE when that and KUBENATS_BENCH_PPROF are set:
// what the operator holds right after convergence.
func (op *operator) saveHeapProfile(b *testing.B) {
	addr, path := os.Getenv("KUBENATS_BENCH_PPROF"), os.Getenv("KUBENATS_BENCH_HEAP_PROFILE")
	if addr == "" || path == "" {
		return
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		b.Logf("heap profile: %v", err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Logf("heap profile: %v", err)
	}
}

// reconcileSummary is the operator's own account of its reconciles, per
// controller: how many, with what result, and how long they took.
func (op *operator) reconcileSummary() string {
	resp, err := http.Get(op.metrics)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") && !strings.HasSuffix(line, " 0") ||
			strings.HasPrefix(line, "controller_runtime_reconcile_time_seconds_sum{") ||
			strings.HasPrefix(line, "workqueue_queue_duration_seconds_sum{") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}
