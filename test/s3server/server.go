// Package s3server runs a real S3-compatible object store for the tests:
// SeaweedFS's `weed mini` (bin/seaweedfs/weed, built from the module proxy
// by hack/build-seaweedfs.sh), serving S3 over TLS with one identity and
// one bucket.
package s3server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/test/loopback"
)

// Server is a running store: its S3 API at Endpoint (host:port, HTTPS
// with a certificate of CAPEM), the keys AccessKey and SecretKey, and the
// bucket Bucket, made at start.
type Server struct {
	Endpoint             string
	CAPEM                []byte
	AccessKey, SecretKey string
	Bucket               string
	// Dir holds its data, configuration and log (weed.log).
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary is where hack/build-seaweedfs.sh puts weed under root.
func Binary(root string) string { return filepath.Join(root, "bin", "seaweedfs", "weed") }

// Start runs the store in dir, listening on host (an address the clients
// reach it at; its certificate names it), and stops it when the test ends.
// It returns once the bucket takes a request.
func Start(t testing.TB, binary, dir, host string) *Server {
	t.Helper()
	s, err := start(binary, dir, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if err := s.waitReady(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}

func start(binary, dir, host string) (*Server, error) {
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("no SeaweedFS at %s: run make test-bins (%v)", binary, err)
	}
	s := &Server{Dir: dir, Bucket: "kubenats-backups", AccessKey: "backup-" + token(4), SecretKey: token(20), done: make(chan struct{})}
	now := time.Now()
	ca, err := pki.NewCA("s3server test CA", now, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	leaf, err := pki.Issue(ca, []string{host}, now, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	s.CAPEM = []byte(ca.Cert)
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	identities := map[string]any{"identities": []any{map[string]any{
		"name":        "backup",
		"credentials": []any{map[string]string{"accessKey": s.AccessKey, "secretKey": s.SecretKey}},
		"actions":     []string{"Admin", "Read", "Write", "List", "Tagging"},
	}}}
	config, _ := json.Marshal(identities)
	for path, b := range map[string][]byte{cert: []byte(leaf.Cert), key: []byte(leaf.Key), filepath.Join(dir, "s3.json"): config} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
	}
	ports, err := freePorts(host, 9)
	if err != nil {
		return nil, err
	}
	s.Endpoint = net.JoinHostPort(host, strconv.Itoa(ports[0]))
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// Every port given (weed's defaults are fixed numbers, which two tests
	// at once would share), and what the tests do not use turned off.
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	cmd := loopback.CommandWithHosts("", binary, "mini",
		"-dir="+data, "-ip="+host, "-ip.bind="+host,
		"-s3.port="+p(0), "-s3.port.grpc="+p(1),
		"-master.port="+p(2), "-master.port.grpc="+p(3),
		"-volume.port="+p(4), "-volume.port.grpc="+p(5),
		"-filer.port="+p(6), "-filer.port.grpc="+p(7),
		"-s3.debug.port="+p(8),
		"-s3.cert.file="+cert, "-s3.key.file="+key,
		"-s3.config="+filepath.Join(dir, "s3.json"),
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-admin.ui=false", "-admin.port.legacy=0", "-webdav=false",
		"-bucket="+s.Bucket)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	s.cmd = cmd
	go func() { _ = cmd.Wait(); close(s.done) }()
	return s, nil
}

// Stop ends the store (SIGTERM, then SIGKILL after 10 s).
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

func token(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// freePorts are n ports of host nothing listens on now, all held until
// each is known, so that no two are the same.
func freePorts(host string, n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
