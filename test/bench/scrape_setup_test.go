package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/loopback"
)

// benchProcess is a program the benchmark started, whose CPU and memory
// it reads from /proc.
type benchProcess struct {
	name string
	cmd  *exec.Cmd
}

// startBenchProcess runs binary with args and env (beside this process's
// own), its output in log, and kills it when the benchmark ends.
func startBenchProcess(b testing.TB, name, binary, log string, env []string, args ...string) *benchProcess {
	b.Helper()
	out, err := os.Create(log)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	cmd := loopback.CommandWithHosts("", binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return &benchProcess{name: name, cmd: cmd}
}

// cpu is the CPU seconds (user and system) the process used so far.
func (p *benchProcess) cpu(b testing.TB) float64 {
	b.Helper()
	_, _, cpu, ok := procStat(p.cmd.Process.Pid)
	if !ok {
		b.Fatalf("reading the CPU of %s (pid %d)", p.name, p.cmd.Process.Pid)
	}
	return cpu
}

// scrapeServer is one nats-server with JetStream, as a process of its own.
type scrapeServer struct {
	proc          *benchProcess
	client, mport int
	trust         *jwtTrust // nil: no JWT accounts, the global account only
}

// startScrapeServer runs the nats-server version the operator deploys by
// default, built by hack/build-nats-servers.sh.
// With trust, the server runs in JWT mode with its accounts.
func startScrapeServer(b testing.TB, trust *jwtTrust) *scrapeServer {
	b.Helper()
	root := inprocess.RepoRoot()
	if err := loopback.BuildNatsServers(root, os.Stderr); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	s := &scrapeServer{client: freePort(b), mport: freePort(b), trust: trust}
	binary := filepath.Join(root, "bin", "nats-server", v1alpha1.DefaultVersion, "nats-server")
	args := []string{"-n", "bench-0", "-a", "127.0.0.1", "-p", strconv.Itoa(s.client), "-m", strconv.Itoa(s.mport),
		"-js", "-sd", filepath.Join(dir, "store")}
	if trust != nil {
		args = append(args, "-c", trust.config(b, dir))
	}
	s.proc = startBenchProcess(b, "nats-server", binary, filepath.Join(dir, "nats-server.log"), nil, args...)
	benchEventually(b, time.Minute, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", s.mport))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz: %s", resp.Status)
		}
		return nil
	})
	return s
}

// fill makes n streams with a message and a durable consumer each, spread
// over the JWT accounts when there are some.
func (s *scrapeServer) fill(b testing.TB, ctx context.Context, n int) {
	b.Helper()
	var users []nats.Option
	if s.trust != nil {
		users = s.trust.users
	} else {
		users = []nats.Option{func(*nats.Options) error { return nil }}
	}
	streams := make([]natsjs.JetStream, len(users))
	for i, user := range users {
		nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", s.client), user)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		if streams[i], err = natsjs.New(nc); err != nil {
			b.Fatal(err)
		}
		// A JWT account's JetStream is turned on as its first client
		// connects: until then its API has no responders.
		benchEventually(b, time.Minute, func() error {
			_, err := streams[i].AccountInfo(ctx)
			return err
		})
	}
	for i := range n {
		js := streams[i%len(streams)]
		name := fmt.Sprintf("S%04d", i)
		st, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: name, Subjects: []string{"s." + name}, Storage: natsjs.FileStorage})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := js.Publish(ctx, "s."+name, []byte("m")); err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateOrUpdateConsumer(ctx, natsjs.ConsumerConfig{Durable: "C", AckPolicy: natsjs.AckExplicitPolicy}); err != nil {
			b.Fatal(err)
		}
	}
}

// startExporter runs the metrics container's command, built from the
// current source, against s, with a series bound above what s serves and
// the container's GOMEMLIMIT (render's metricsContainer).
func startExporter(b testing.TB, s *scrapeServer) *exporterProcess {
	b.Helper()
	dir := b.TempDir()
	binary, err := loopback.BuildKubenats(inprocess.RepoRoot(), dir, os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	port := freePort(b)
	e := &exporterProcess{url: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}
	e.proc = startBenchProcess(b, "kubenats exporter", binary, filepath.Join(dir, "exporter.log"),
		[]string{"GOMEMLIMIT=50MiB"}, "exporter",
		"-listen=127.0.0.1:"+strconv.Itoa(port), fmt.Sprintf("-monitor-url=http://127.0.0.1:%d", s.mport),
		"-server-name=bench-0", "-namespace=bench", "-natscluster=bench", "-max-series=1000000")
	benchEventually(b, time.Minute, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	return e
}
