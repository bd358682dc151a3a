package e2e_test

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kubenats/kubenats/internal/render"
)

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

// rogueKit is what the attacker brings to the route port: a password for
// the route URL ("" for none) and a TLS key pair with the CA it trusts
// (all empty for plain TCP). Taken from a NatsCluster of the attacker's own
// (stolenKit), or made up (a CA of its own).
type rogueKit struct {
	password      string
	cert, key, ca string
}

// startRogue runs a nats-server with the victim's cluster name, JetStream
// and its own accounts, on address ip (outside the loopback cluster's
// 127.0.x.0/24 ranges), routed to the victim's first server by
// address, with the kit's credentials.
func startRogue(t *testing.T, f *formed, ip string, kit rogueKit) *rogueServer {
	t.Helper()
	dir := t.TempDir()
	r := &rogueServer{ip: ip, name: "rogue", logPath: filepath.Join(dir, "rogue.log")}
	tlsBlock := ""
	if kit.cert != "" {
		for name, data := range map[string]string{"tls.crt": kit.cert, "tls.key": kit.key, "ca.crt": kit.ca} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// insecure: the rogue dials an address, and does not care whom it
		// reaches; what is tested is whether the victim lets it in.
		tlsBlock = fmt.Sprintf(`tls { cert_file: %q, key_file: %q, ca_file: %q, insecure: true }`,
			filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt"))
	}
	route := url.URL{Scheme: "nats", Host: f.IP(f.Pods[0]) + ":6222"}
	if kit.password != "" {
		route.User = url.UserPassword(render.RouteUser, kit.password)
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
  routes: [%q]
}
`, r.name, r.ip, filepath.Join(dir, "js"), f.Cluster.Name, r.ip, tlsBlock, route.String())
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
	for _, pod := range f.Pods {
		var rz routez
		if err := monitor(f.IP(pod), "/routez", &rz); err != nil {
			return err
		}
		for _, route := range rz.Routes {
			if route.RemoteName == r.name {
				return fmt.Errorf("%s has a route to %s", pod, r.name)
			}
		}
		var j jsz
		if err := monitor(f.IP(pod), "/jsz", &j); err != nil {
			return err
		}
		if j.Meta != nil && j.Meta.Size != len(f.Pods) {
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
