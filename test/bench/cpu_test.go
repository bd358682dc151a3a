package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clockTicks is the kernel's USER_HZ, which /proc/<pid>/stat counts in;
// it is 100 on every Linux this runs on.
const clockTicks = 100

// cpuSeconds reads the CPU time (user and system) used so far by this
// process and by each of its children, by command name: the API server,
// etcd, the operator, and this process, which also hosts the nats-server.
// Where the machine's two cores go during a run says who the bottleneck is.
func cpuSeconds() map[string]float64 {
	self := os.Getpid()
	out := map[string]float64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, ppid, cpu, ok := procStat(pid)
		if !ok || (pid != self && ppid != self) {
			continue
		}
		if pid == self {
			comm = "bench+nats-server"
		}
		out[comm] += cpu
	}
	return out
}

// procStat parses /proc/<pid>/stat: the command name, parent and CPU time.
func procStat(pid int) (comm string, ppid int, cpu float64, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	fields := strings.Fields(s[end+1:]) // fields[0] is the state, field 3 of stat
	if len(fields) < 13 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return s[open+1 : end], ppid, (utime + stime) / clockTicks, true
}

// cpuReport is the CPU each process used between two readings, largest
// first, as "name 12.3s".
func cpuReport(before, after map[string]float64) string {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return after[names[i]]-before[names[i]] > after[names[j]]-before[names[j]] })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1fs", n, after[n]-before[n]))
	}
	return strings.Join(parts, ", ")
}

// profileAPIServer records a 15-second CPU profile of the API server into
// path, in the background, when path is set: the API server is where most
// of a run's CPU goes.
func profileAPIServer(b testing.TB, cfg *rest.Config, path string) {
	if path == "" {
		return
	}
	go func() {
		data, err := apiServerGet(cfg, "/debug/pprof/profile?seconds=15")
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		if err != nil {
			b.Logf("API server profile: %v", err)
		}
	}()
}

// apiServerGet reads one of the API server's non-resource paths.
func apiServerGet(cfg *rest.Config, path string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	p, query, _ := strings.Cut(path, "?")
	req := cs.Discovery().RESTClient().Get().AbsPath(p)
	if k, v, ok := strings.Cut(query, "="); ok {
		req = req.Param(k, v)
	}
	return req.DoRaw(context.Background())
}

// apiServerWrites reads the API server's own count of write requests to
// kubenats' resources, by verb, resource and subresource: who wrote what,
// as an audit log would tell, without the audit log's cost.
func apiServerWrites(b testing.TB, cfg *rest.Config) map[string]float64 {
	data, err := apiServerGet(cfg, "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	fams, err := metricFamilies(bytes.NewReader(data))
	if err != nil {
		b.Fatalf("the API server's metrics: %v", err)
	}
	fam, ok := fams["apiserver_request_total"]
	if !ok {
		b.Fatal("the API server's metrics have no apiserver_request_total")
	}
	out := map[string]float64{}
	for _, m := range fam.GetMetric() {
		l := labels(m)
		if l["group"] != "kubenats.io" || l["verb"] == "GET" || l["verb"] == "LIST" || l["verb"] == "WATCH" {
			continue
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// writesReport is the writes between two readings, as "VERB resource n".
func writesReport(before, after map[string]float64) string {
	keys := make([]string, 0, len(after))
	for k := range after {
		if after[k] > before[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, after[k]-before[k]))
	}
	return strings.Join(parts, ", ")
}
