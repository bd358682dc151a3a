package promserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/test/loopback"
	"github.com/kubenats/kubenats/test/poll"
)

// Server is a running Prometheus (bin/prometheus/prometheus, built by
// hack/build-prometheus.sh) with its HTTP API at URL.
type Server struct {
	URL string
	// Dir holds its configuration, rules, data and log (prometheus.log).
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary is where hack/build-prometheus.sh puts Prometheus under root.
func Binary(root string) string { return filepath.Join(root, "bin", "prometheus", "prometheus") }

// Start runs Prometheus with cfg (and rules, a rule file, when not nil)
// in dir, and stops it when the test ends. It returns once Prometheus
// says it is ready.
func Start(t testing.TB, binary, dir string, cfg Config, rules []byte) *Server {
	t.Helper()
	s, err := start(binary, dir, cfg, rules)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	poll.Until(t, time.Minute, s.ready)
	return s
}

func start(binary, dir string, cfg Config, rules []byte) (*Server, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	if rules != nil {
		path := filepath.Join(dir, "rules.yaml")
		if err := os.WriteFile(path, rules, 0o644); err != nil {
			return nil, err
		}
		cfg.RuleFiles = []string{path}
	}
	text, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, text, 0o644); err != nil {
		return nil, err
	}
	addr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// Its own process group, killed with this process (Pdeathsig): a test
	// binary killed at its timeout leaves no Prometheus behind.
	cmd := loopback.CommandWithHosts("", binary,
		"--config.file="+config,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=info")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (run hack/build-prometheus.sh): %w", binary, err)
	}
	s := &Server{URL: "http://" + addr, Dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	return s, nil
}

// ready is nil once /-/ready answers 200.
func (s *Server) ready() error {
	select {
	case <-s.done:
		return fmt.Errorf("prometheus exited: see %s", filepath.Join(s.Dir, "prometheus.log"))
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/-/ready: %s", resp.Status)
	}
	return nil
}

// Stop ends Prometheus (SIGTERM, then SIGKILL after 10 s).
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// freeAddress is a loopback address with a port nothing listens on now.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
