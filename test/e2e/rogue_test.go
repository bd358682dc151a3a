package e2e_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
)

// rogueWindow is how long a refused server is watched for: long enough for
// many of its route reconnects (one a second) and a gossip round.
const rogueWindow = 10 * time.Second

// TestRoutesRefuseStrangers: a nats-server started elsewhere with the
// cluster's name and a route to one of its servers, as an attacker in
// another namespace would start it, never becomes a route peer or a member
// of the JetStream meta group: not as a plain server without credentials,
// not with TLS from a CA of its own. With route TLS turned off the route
// password alone still keeps it out.
func TestRoutesRefuseStrangers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edits    []func(*v1alpha1.NatsClusterSpec)
		rogueTLS bool
		wantTLS  bool
	}{
		{"route-tls-plain-rogue", nil, false, true},
		{"route-tls-rogue-with-its-own-ca", nil, true, true},
		{"route-tls-off-password-alone", []func(*v1alpha1.NatsClusterSpec){routeTLS(false)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := formCluster(t, tc.edits...)
			checkRoutes(t, f)
			for _, pod := range f.pods {
				checkRoutePort(t, f, pod, tc.wantTLS)
			}
			rogue := startRogue(t, f, tc.rogueTLS)
			deadline := time.Now().Add(rogueWindow)
			for time.Now().Before(deadline) {
				if err := noRoguePeer(f, rogue); err != nil {
					t.Fatalf("the rogue server got in: %v\nits log:\n%s", err, lastLines(rogue.log(), 20))
				}
				time.Sleep(250 * time.Millisecond)
			}
			// The rogue did try: its attempts were refused, not never made.
			if !strings.Contains(rogue.log(), f.ip(f.pods[0])) {
				t.Errorf("the rogue's log shows no route attempt to %s:\n%s", f.ip(f.pods[0]), lastLines(rogue.log(), 20))
			}
		})
	}
}

func routeTLS(on bool) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) { s.TLS.Routes.Enabled = &on }
}

// checkRoutePort: with route TLS the route port speaks TLS from its first
// byte, shows a certificate for the server's DNS names and refuses a
// handshake without a client certificate; without, its INFO asks for
// authentication. It returns the issuer of the certificate shown (empty
// without TLS).
func checkRoutePort(t *testing.T, f *formed, pod string, wantTLS bool) (issuer string) {
	t.Helper()
	addr := net.JoinHostPort(f.ip(pod), "6222")
	if !wantTLS {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			AuthRequired bool `json:"auth_required"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "INFO ")), &info); err != nil || !info.AuthRequired {
			t.Fatalf("%s's route port says %q: want INFO with auth_required", pod, line)
		}
		return ""
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	// Only to look at the certificate: no client certificate offered.
	conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		// TLS 1.3 reports a refused client certificate on the first read.
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		state := conn.ConnectionState()
		if len(state.PeerCertificates) > 0 {
			issuer = state.PeerCertificates[0].Issuer.String()
			names := state.PeerCertificates[0].DNSNames
			if !slices.Contains(names, "*."+f.cluster.Name+"-headless") || len(state.PeerCertificates[0].IPAddresses) != 0 {
				t.Errorf("%s's route certificate names %v, IPs %v; want the headless wildcards and no IP", pod, names, state.PeerCertificates[0].IPAddresses)
			}
		}
		conn.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("%s's route port took a TLS client without a certificate (error %v)", pod, err)
	}
	if issuer == "" {
		t.Fatalf("%s's route port speaks TLS but showed no certificate", pod)
	}
	return issuer
}

// rogueServer is a nats-server of an attacker's making.
type rogueServer struct {
	ip      string
	name    string
	logPath string
}

func (r *rogueServer) log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// startRogue runs a nats-server with the cluster's name, JetStream and its
// own accounts, on an address of its own (outside the loopback cluster's
// 127.0.x.0/24 ranges), routed to the cluster's first server by address.
func startRogue(t *testing.T, f *formed, withTLS bool) *rogueServer {
	t.Helper()
	dir := t.TempDir()
	r := &rogueServer{ip: "127.1.0.7", name: "rogue", logPath: filepath.Join(dir, "rogue.log")}
	tlsBlock := ""
	if withTLS {
		now := time.Now()
		ca, err := pki.NewCA("rogue CA", now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// Names the cluster's servers carry: only the CA gives it away.
		leaf, err := pki.Issue(ca, []string{"*." + f.cluster.Name + "-headless"}, now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"tls.crt": leaf.Cert, "tls.key": leaf.Key, "ca.crt": ca.Cert} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tlsBlock = fmt.Sprintf(`tls { cert_file: %q, key_file: %q, ca_file: %q, insecure: true }`,
			filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt"))
	}
	conf := fmt.Sprintf(`server_name: %s
host: %s
port: 4222
http_port: 8222
jetstream { store_dir: %q }
accounts { APP { jetstream: enabled, users: [{user: a, password: a}] }, SYS { users: [{user: s, password: s}] } }
system_account: SYS
cluster {
  name: %s
  host: %s
  port: 6222
  %s
  routes: ["nats://%s:6222"]
}
`, r.name, r.ip, filepath.Join(dir, "js"), f.cluster.Name, r.ip, tlsBlock, f.ip(f.pods[0]))
	confPath := filepath.Join(dir, "rogue.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(natsServerBinary(t), "-c", confPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
	})
	eventually(t, wait, func() error {
		var v struct{}
		return monitor(r.ip, "/varz", &v)
	})
	return r
}

// noRoguePeer: no server of the cluster routes to the rogue or counts it in
// the meta group, and the rogue routes to nobody.
func noRoguePeer(f *formed, r *rogueServer) error {
	for _, pod := range f.pods {
		var rz routez
		if err := monitor(f.ip(pod), "/routez", &rz); err != nil {
			return err
		}
		for _, route := range rz.Routes {
			if route.RemoteName == r.name {
				return fmt.Errorf("%s has a route to %s", pod, r.name)
			}
		}
		var j jsz
		if err := monitor(f.ip(pod), "/jsz", &j); err != nil {
			return err
		}
		if j.Meta != nil && j.Meta.Size != len(f.pods) {
			return fmt.Errorf("%s counts %d servers in the meta group", pod, j.Meta.Size)
		}
	}
	// The rogue's own view: a route it dials is listed from its first
	// byte until the cluster's refusal comes back, a few milliseconds
	// (sampling every 250 ms once caught one such: "the rogue has 1
	// routes" of a route refused at once). A route the cluster accepted
	// stays: any route of the rogue up for longer than a refusal can take
	// is one that got in.
	var own struct {
		Now    time.Time `json:"now"`
		Routes []struct {
			RemoteName string    `json:"remote_name"`
			Start      time.Time `json:"start"`
		} `json:"routes"`
	}
	if err := monitor(r.ip, "/routez", &own); err != nil {
		return err
	}
	for _, route := range own.Routes {
		if up := own.Now.Sub(route.Start); up > routeRefusalTime {
			return fmt.Errorf("the rogue has had a route to %q for %s", route.RemoteName, up.Round(time.Millisecond))
		}
	}
	return nil
}

// routeRefusalTime is far longer than a refused route lives (one round
// trip between two processes of this machine, however busy).
const routeRefusalTime = 2 * time.Second

// natsServerBinary is the nats-server of the operator's default version.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(cluster.RepoRoot(), "bin", "nats-server", v1alpha1.DefaultVersion, "nats-server")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}
