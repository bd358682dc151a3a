package bench

import (
	"errors"
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

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// operator is the kubenats manager running as its own process, so that its
// memory and its API requests are its own.
type operator struct {
	cmd     *exec.Cmd
	metrics string
}

func startOperator(b testing.TB, binary, kubeconfig string, metricsPort int) *operator {
	b.Helper()
	op := &operator{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}
	op.cmd = exec.Command(binary, "manager",
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--health-probe-bind-address", "0",
		"--jetstream-workers", strconv.Itoa(envInt("KUBENATS_BENCH_WORKERS", 16)),
		"--zap-log-level", "error",
		// The benchmark's nats-server listens on 127.0.0.1, which the
		// shipped operator refuses as a target of a resource.
		"--allow-local-targets",
		// Plain HTTP on loopback: the authenticated endpoint would ask
		// the API server to review each scrape's token, and those
		// requests would count as the operator's own.
		"--metrics-insecure",
		"--pprof-bind-address", os.Getenv("KUBENATS_BENCH_PPROF"))
	// The soft memory limit the install ships: the peak RSS measured is
	// the shipped operator's.
	op.cmd.Env = append(os.Environ(), "GOMEMLIMIT="+shippedMemLimit(b))
	op.cmd.Stdout, op.cmd.Stderr = os.Stderr, os.Stderr
	op.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := op.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = op.cmd.Process.Kill(); _ = op.cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := op.requests()
		var answered *answerError
		switch {
		case err == nil:
			return op
		case errors.As(err, &answered):
			// An answer that is not the metrics will not become them.
			b.Fatalf("the operator's metrics endpoint: %v", err)
		case time.Now().After(deadline):
			b.Fatalf("the operator's metrics endpoint never answered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shippedMemLimit is the GOMEMLIMIT the install gives the operator's
// container (config/manager/manager.yaml).
func shippedMemLimit(b testing.TB) string {
	b.Helper()
	data, err := os.ReadFile("../../config/manager/manager.yaml")
	if err != nil {
		b.Fatal(err)
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		b.Fatal(err)
	}
	for _, doc := range docs {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "GOMEMLIMIT" && e.Value != "" {
					return e.Value
				}
			}
		}
	}
	b.Fatal("config/manager/manager.yaml gives the operator no GOMEMLIMIT")
	return ""
}

// stop ends the operator as Kubernetes would, and waits for it.
func (op *operator) stop(b testing.TB) {
	b.Helper()
	if err := op.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	_ = op.cmd.Wait()
}

// reconciled is how many reconciles each controller finished without an
// error.
func (op *operator) reconciled(b testing.TB) map[string]int {
	b.Helper()
	// Only the one family: the restart's recheck polls this every 20 ms,
	// and the whole page (a series per resource) would cost the operator
	// and this process a share of the two cores being measured.
	fams, err := op.scrape("controller_runtime_reconcile_total")
	if err != nil {
		b.Fatalf("the operator's metrics: %v", err)
	}
	out := map[string]int{}
	for _, m := range fams["controller_runtime_reconcile_total"].GetMetric() {
		if l := labels(m); l["result"] != "error" {
			out[l["controller"]] += int(m.GetCounter().GetValue())
		}
	}
	return out
}

// gauge is the value of one of the operator's gauges.
func (op *operator) gauge(b testing.TB, name string) float64 {
	b.Helper()
	fams, err := op.scrape()
	if err != nil {
		b.Fatalf("the operator's metrics: %v", err)
	}
	ms := fams[name].GetMetric()
	if len(ms) != 1 {
		b.Fatalf("the operator's metrics have %d samples of %s, want 1", len(ms), name)
	}
	return ms[0].GetGauge().GetValue()
}

// answerError is an HTTP answer that is not the metrics.
type answerError struct{ url, status string }

func (e *answerError) Error() string { return e.url + " answered " + e.status }

// requests reads the operator's API requests so far, by HTTP method, from
// client-go's own counter. Anything but a readable counter is an error: a
// page that is not the metrics (an HTTPS endpoint asked over HTTP answers
// 400) must not read as zero requests.
func (op *operator) requests() (map[string]float64, error) {
	fams, err := op.scrape("rest_client_requests_total")
	if err != nil {
		return nil, err
	}
	fam, ok := fams["rest_client_requests_total"]
	if !ok || len(fam.GetMetric()) == 0 {
		return nil, fmt.Errorf("%s has no rest_client_requests_total", op.metrics)
	}
	out := map[string]float64{}
	for _, m := range fam.GetMetric() {
		if method := labels(m)["method"]; method != "" {
			out[method] += m.GetCounter().GetValue()
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: rest_client_requests_total has no method label", op.metrics)
	}
	return out, nil
}

// scrape reads the operator's metrics with Prometheus' own text parser.
func (op *operator) scrape(only ...string) (map[string]*dto.MetricFamily, error) {
	url := op.metrics
	for i, name := range only {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		url += sep + "name[]=" + name
	}
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &answerError{op.metrics, resp.Status}
	}
	fams, err := metricFamilies(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.metrics, err)
	}
	return fams, nil
}

// metricFamilies parses Prometheus' text format with Prometheus' own parser.
func metricFamilies(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// labels is a sample's labels as a map.
func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// mustRequests is requests, failing the run when they cannot be read.
func (op *operator) mustRequests(b testing.TB) map[string]float64 {
	b.Helper()
	r, err := op.requests()
	if err != nil {
		b.Fatalf("the operator's request counter: %v", err)
	}
	return r
}

// peakRSS is the process's high-water resident memory, in MiB: anonymous
// memory and the pages of its binary alike.
func (op *operator) peakRSS(b testing.TB) float64 { return op.procStatus(b, "VmHWM:") }

// anonRSS is the process's resident anonymous memory now, in MiB: its heap,
// stacks and runtime, without the pages of its binary (file-backed, which
// the kernel can drop and read again under a cgroup's memory pressure).
func (op *operator) anonRSS(b testing.TB) float64 { return op.procStatus(b, "RssAnon:") }

// procStatus reads one of the operator's /proc/<pid>/status kB figures, in
// MiB.
func (op *operator) procStatus(b testing.TB, field string) float64 {
	b.Helper()
	return procStatus(b, "the operator", op.cmd.Process.Pid, field)
}

// procStatus reads one of /proc/<pid>/status's kB figures, in MiB.
func procStatus(b testing.TB, who string, pid int, field string) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("%s's %s %v", who, field, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == field {
			kb, err := strconv.ParseFloat(fields[1], 64)
			if err != nil || kb <= 0 {
				b.Fatalf("%s's %s %q", who, field, line)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
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
func (op *operator) saveHeapProfile(b testing.TB) {
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
	fams, err := op.scrape()
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, name := range []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds", "workqueue_queue_duration_seconds"} {
		for _, m := range fams[name].GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = h.GetSampleSum()
			}
			if v != 0 {
				lines = append(lines, fmt.Sprintf("%s{%s} %g", name, strings.Join(labels, ","), v))
			}
		}
	}
	return strings.Join(lines, "\n")
}
