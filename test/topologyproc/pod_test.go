// Package topologyproc runs the operator's rendered leafnode and gateway
// configuration as real nats-server processes, each on a loopback address
// of its own, the way the loopback kubelet runs a pod's nats container:
// nats.conf from the ConfigMap, the projected and mounted Secrets as
// files, the environment from the Secrets. No Kubernetes: the tier between
// the render tests and the loopback cluster's end-to-end tests.
package topologyproc

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// natsServerBinary is what hack/build-nats-servers.sh builds.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "nats-server", v1alpha1.DefaultVersion, "nats-server")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: run hack/build-nats-servers.sh (make test-bins)", bin)
	}
	return bin
}

// Addresses: one /24 of 127.0.0.0/8 per test binary, picked at random so
// that other test runs on the machine rarely share it.
var (
	subnet   = 100 + rand.IntN(150)
	nextHost atomic.Int32
)

func newIP() string { return fmt.Sprintf("127.%d.%d.%d", subnet, os.Getpid()%250+1, nextHost.Add(1)) }

// proc is one nats-server process.
type proc struct {
	t   *testing.T
	cmd *exec.Cmd
	ip  string
	log string
	dir string
}

// start runs nats-server -c conf with env, in dir, and waits for its client port.
func start(t *testing.T, dir, conf, ip string, env []string) *proc {
	return startWithHosts(t, dir, conf, ip, env, "")
}

// startWithHosts is start with hosts as the process's /etc/hosts (a
// mount namespace of its own, as each loopback pod has), so that it
// resolves pod DNS names and verifies certificates by them. Needs root.
func startWithHosts(t *testing.T, dir, conf, ip string, env []string, hosts string) *proc {
	t.Helper()
	p := &proc{t: t, ip: ip, dir: dir, log: filepath.Join(dir, "server.log")}
	p.cmd = exec.Command(natsServerBinary(t), "-c", conf, "-l", p.log)
	if hosts != "" {
		if os.Geteuid() != 0 {
			t.Fatal("pod DNS names need a mount namespace: run as root, as the loopback cluster does")
		}
		file := filepath.Join(dir, "hosts")
		if err := os.WriteFile(file, []byte(hosts), 0o644); err != nil {
			t.Fatal(err)
		}
		// unshare and sh exec in place: the pid stays the server's.
		p.cmd = exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
			`mount --bind "$0" /etc/hosts && exec "$@"`, file, natsServerBinary(t), "-c", conf, "-l", p.log)
	}
	p.cmd.Env, p.cmd.Dir = env, dir
	// Start-up errors (a config it refuses) go to stderr, before the log.
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
		}
		if t.Failed() {
			body, _ := os.ReadFile(p.log)
			t.Logf("log of the server on %s:\n%s", ip, body)
		}
	})
	poll.Until(t, 15*time.Second, func() error {
		c, err := net.DialTimeout("tcp", ip+":4222", time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	return p
}

// reload is what the operator asks for: SIGHUP, the same process.
func (p *proc) reload() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		p.t.Fatal(err)
	}
}

// logged reports whether a line of the server's log matches re.
func (p *proc) logged(re *regexp.Regexp) bool {
	f, err := os.Open(p.log)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if re.MatchString(s.Text()) {
			return true
		}
	}
	return false
}

// monitor GETs a monitoring endpoint.
func (p *proc) monitor(path string) (string, error) {
	resp, err := http.Get("http://" + p.ip + ":8222" + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return b.String(), err
}

// pod is one server of a rendered NatsCluster, materialized in dir as
// the loopback kubelet would: files of the ConfigMap and Secrets at their
// mount paths under dir, the environment resolved from the Secrets.
type pod struct {
	c       *v1alpha1.NatsCluster
	dir, ip string
	env     []string
	secrets map[string]map[string]string
}

// materialize renders c with cred and writes pod 0's files. users are the
// user Secrets c names (opted in, as the controller would have checked).
func materialize(t *testing.T, c *v1alpha1.NatsCluster, cred render.Credentials, users map[string]map[string]string, dir, ip string) *pod {
	t.Helper()
	objs, err := render.Objects(c, render.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]map[string]string{}
	for name, data := range users {
		secrets[name] = data
	}
	if cred.ClientPKI == nil && c.Spec.GeneratesClientPKI() {
		cred.ClientPKI = issueClientPKI(t, c)
	}
	for _, s := range render.Secrets(c.WithDefaults(), cred) {
		secrets[s.Name] = s.StringData
	}
	var conf string
	var sts *appsv1.StatefulSet
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			conf = o.Data[render.ConfigKey]
		case *appsv1.StatefulSet:
			sts = o
		}
	}
	p := &pod{c: c, dir: dir, ip: ip, secrets: secrets}
	spec := sts.Spec.Template.Spec
	ctr := spec.Containers[0]
	mounts := map[string]string{} // volume -> mount path
	for _, m := range ctr.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range spec.Volumes {
		at, ok := mounts[v.Name]
		if !ok {
			continue
		}
		files := map[string]string{}
		switch {
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				switch {
				case src.ConfigMap != nil:
					files[render.ConfigKey] = conf
				case src.Secret != nil:
					data := secrets[src.Secret.Name]
					if len(src.Secret.Items) == 0 {
						for k, v := range data {
							files[k] = v
						}
					}
					for _, it := range src.Secret.Items {
						files[it.Path] = data[it.Key]
					}
				}
			}
		case v.Secret != nil:
			for _, it := range v.Secret.Items {
				files[it.Path] = secrets[v.Secret.SecretName][it.Key]
			}
		}
		p.write(t, at, files)
	}
	if err := os.MkdirAll(p.local(render.PidDir), 0o755); err != nil {
		t.Fatal(err)
	}
	p.resolveEnv(t, ctr)
	return p
}

// write puts files under the mount path, each path of the pod rewritten
// to dir, every listener bound to the pod's address.
func (p *pod) write(t *testing.T, mountPath string, files map[string]string) {
	t.Helper()
	at := p.local(mountPath)
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if name == render.ConfigKey {
			body = p.bind(p.rewrite(body))
		}
		if err := os.WriteFile(filepath.Join(at, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func (p *pod) local(path string) string { return filepath.Join(p.dir, path) }

// rewrite moves the pod's absolute paths under dir.
func (p *pod) rewrite(text string) string {
	for _, prefix := range []string{render.ConfigDir, render.TLSDir, render.PidDir, render.StoreDir + "\""} {
		text = strings.ReplaceAll(text, "\""+prefix, "\""+p.local(prefix))
	}
	return text
}

var listenerLine = regexp.MustCompile(`(?m)^(cluster|gateway|leafnodes) \{$`)

// bind puts every listener on the pod's address, as the loopback kubelet
// does.
func (p *pod) bind(text string) string {
	host := `host: "` + p.ip + `"`
	return listenerLine.ReplaceAllString(text, "$1 {\n  "+host) + host + "\n"
}

// resolveEnv is the container's environment as the kubelet makes it.
func (p *pod) resolveEnv(t *testing.T, ctr corev1.Container) {
	t.Helper()
	vals := map[string]string{}
	expand := regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)
	for _, e := range ctr.Env {
		v := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			v = p.c.Name + "-0"
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			var ok bool
			if v, ok = p.secrets[ref.Name][ref.Key]; !ok {
				t.Fatalf("env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key)
			}
		default:
			v = expand.ReplaceAllStringFunc(v, func(m string) string { return vals[m[2:len(m)-1]] })
		}
		vals[e.Name] = v
		p.env = append(p.env, e.Name+"="+v)
	}
}

// run starts the pod's server.
func (p *pod) run(t *testing.T) *proc { return p.runWithHosts(t, "") }

// runWithHosts starts it with hosts as its /etc/hosts.
func (p *pod) runWithHosts(t *testing.T, hosts string) *proc {
	return startWithHosts(t, p.dir, p.local(render.ConfigFile), p.ip, p.env, hosts)
}

// rematerialize writes c's files again (a spec or Secret change) into the
// same directories, as the kubelet refreshes a running pod's volumes.
func (p *pod) rematerialize(t *testing.T, c *v1alpha1.NatsCluster, cred render.Credentials, users map[string]map[string]string) {
	t.Helper()
	next := materialize(t, c, cred, users, p.dir, p.ip)
	p.c, p.secrets = next.c, next.secrets
}

// plain writes a nats.conf of the test's own (an edge server or a hub
// outside Kubernetes) and runs it.
func plain(t *testing.T, ip, conf string) *proc {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("host: %q\nhttp: \"%s:8222\"\n%s", ip, ip, conf)
	if err := os.WriteFile(filepath.Join(dir, "config", "nats.conf"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return start(t, dir, filepath.Join(dir, "config", "nats.conf"), ip, nil)
}

// writeFiles writes files into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// issueClientPKI makes the client CA and certificate the operator would
// keep for c.
func issueClientPKI(t *testing.T, c *v1alpha1.NatsCluster) *render.ClientPKI {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA(c.Name+" client CA", now, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.Issue(ca, c.ClientDNSNames(render.DefaultClusterDomain), now, pki.CertValidity)
	if err != nil {
		t.Fatal(err)
	}
	return &render.ClientPKI{CA: ca, Cert: cert}
}
