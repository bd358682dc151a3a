package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/loopback"
)

// The floor: the three servers of a 3-replica NatsCluster, started by hand
// on this machine with the configuration the operator renders, and nothing
// else: no API server, no StatefulSet, no kubelet, no probes' periods.
//
// The configuration is the operator's own model (render.NatsConf, checked
// to be the text of render.Objects' ConfigMap), with exactly what the
// loopback kubelet changes for a pod: container paths (store_dir, pid_file,
// the route certificate's files) become directories of this run, and every
// listener binds the server's own address. The environment is the
// StatefulSet's container env, resolved as the kubelet resolves it, with
// generated passwords for the Secrets it names and the route URLs the routes
// Secret carries (render.RouteURLs). Route TLS is the operator's default: a
// CA and a route certificate made with internal/pki for NatsCluster.RouteDNSNames,
// as the operator makes them. The servers find each other by pod DNS name,
// as the loopback's pods do: each runs in a mount namespace whose /etc/hosts
// is a hosts file of the loopback's format (loopback.HostsFileContent,
// loopback.CommandWithHosts), listing all three from the start.

// floorTimeout bounds the wait for the hand-started servers.
const floorTimeout = 2 * time.Minute

// floorResult is how long the hand-started servers took.
type floorResult struct {
	// healthy: all answer /healthz?js-server-only=true (the readiness
	// probe's check) with 200.
	healthy time.Duration
	// leader: healthy, and all name the same JetStream meta leader.
	leader     time.Duration
	metaLeader string
}

// floorServer is one hand-started nats-server.
type floorServer struct {
	pod, ip, dir string
	cmd          *exec.Cmd
	done         chan struct{} // closed once the process has exited
	stopOnce     sync.Once
}

// floorFiles are what the servers of one floor share: the hosts file and
// the route certificate's directory ("" without route TLS).
type floorFiles struct {
	hosts, routeTLSDir, clientTLSDir string
}

// measureFloor starts the three servers, with route TLS or without, times
// them to a meta leader, and stops them.
func measureFloor(b testing.TB, routeTLS bool) floorResult {
	b.Helper()
	nc := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-floor", Name: benchClusterName}}
	nc.Spec.TLS.Routes.Enabled = &routeTLS
	nc = nc.WithDefaults()
	binary := filepath.Join(inprocess.RepoRoot(), "bin", "nats-server", nc.Spec.Version, "nats-server")
	if _, err := os.Stat(binary); err != nil {
		b.Fatal(err)
	}
	ctr := renderedServerContainer(b, nc)
	slot := lockAddressSlot(b)
	secrets := map[string]string{} // "<secret>/<key>" -> value
	for _, name := range []string{nc.AuthSecretName(), nc.SystemSecretName(), nc.RouteSecretName()} {
		secrets[name+"/"+render.PasswordKey] = newFloorPassword(b)
	}
	routePassword := secrets[nc.RouteSecretName()+"/"+render.PasswordKey]
	secrets[nc.RouteSecretName()+"/"+render.RouteURLsKey] = render.RouteURLs(nc, routePassword)

	servers := make([]*floorServer, nc.Spec.ReplicaCount())
	var records []loopback.PodDNSRecord
	for i := range servers {
		s := &floorServer{pod: nc.PodName(i), ip: fmt.Sprintf("127.0.%d.%d", slot, i+1), dir: b.TempDir(), done: make(chan struct{})}
		servers[i] = s
		records = append(records, loopback.PodDNSRecord{Namespace: nc.Namespace, Hostname: s.pod, Subdomain: nc.HeadlessServiceName(), IP: s.ip})
	}
	files := floorFiles{hosts: filepath.Join(b.TempDir(), "hosts")}
	if err := os.WriteFile(files.hosts, loopback.HostsFileContent(nc.Namespace, records), 0o644); err != nil {
		b.Fatal(err)
	}
	if nc.Spec.RouteTLSEnabled() {
		files.routeTLSDir = writeFloorPKI(b, nc, "route", nc.RouteDNSNames(render.DefaultClusterDomain))
	}
	files.clientTLSDir = writeFloorPKI(b, nc, "client", nc.ClientDNSNames(render.DefaultClusterDomain))
	for _, s := range servers {
		s.prepare(b, binary, nc, ctr, files, secrets)
	}
	stopAll := func() {
		for _, s := range servers {
			s.stop()
		}
	}
	b.Cleanup(stopAll)

	start := time.Now()
	for _, s := range servers {
		if err := s.cmd.Start(); err != nil {
			b.Fatal(err)
		}
		go func() {
			_ = s.cmd.Wait()
			close(s.done)
		}()
	}
	res := waitForFloor(b, servers, start)
	checkFloorRouteTLS(b, servers, routeTLS)
	stopAll()
	return res
}

// checkFloorRouteTLS fails the benchmark unless every server's route
// listener requires TLS exactly when the floor asked for it: the floor
// measures what it says it measures.
func checkFloorRouteTLS(b testing.TB, servers []*floorServer, routeTLS bool) {
	b.Helper()
	hc := &http.Client{Timeout: time.Second}
	for _, s := range servers {
		var v struct {
			Cluster struct {
				TLSRequired bool `json:"tls_required"`
				TLSVerify   bool `json:"tls_verify"`
			} `json:"cluster"`
		}
		if err := s.get(hc, "/varz", &v); err != nil {
			b.Fatalf("%s: /varz: %v", s.pod, err)
		}
		if v.Cluster.TLSRequired != routeTLS || v.Cluster.TLSVerify != routeTLS {
			b.Fatalf("%s: route tls_required %t, tls_verify %t; the floor asked for route TLS %t", s.pod, v.Cluster.TLSRequired, v.Cluster.TLSVerify, routeTLS)
		}
	}
}

// renderedServerContainer is the nats container of the StatefulSet that
// render.Objects makes for nc, after checking that the ConfigMap it makes
// holds what render.MarkedNatsConf renders: the model the floor edits.
func renderedServerContainer(b testing.TB, nc *v1alpha1.NatsCluster) *corev1.Container {
	b.Helper()
	objs, err := render.Objects(nc, render.Inputs{})
	if err != nil {
		b.Fatal(err)
	}
	conf, err := render.Conf(nc)
	if err != nil {
		b.Fatal(err)
	}
	model, _, err := render.MarkedNatsConf(nc)
	if err != nil {
		b.Fatal(err)
	}
	text, err := model.Render()
	if err != nil {
		b.Fatal(err)
	}
	if conf.Text != string(text) {
		b.Fatalf("render.MarkedNatsConf renders otherwise than render.Conf:\n%s\n---\n%s", conf.Text, text)
	}
	var ctr *corev1.Container
	sawConfigMap := false
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			if o.Data[render.ConfigKey] != string(text) {
				b.Fatalf("the ConfigMap's nats.conf is not render.MarkedNatsConf's rendering:\n%s\n---\n%s", o.Data[render.ConfigKey], text)
			}
			sawConfigMap = true
		case *appsv1.StatefulSet:
			for i := range o.Spec.Template.Spec.Containers {
				if o.Spec.Template.Spec.Containers[i].Name == render.ServerContainerName {
					ctr = &o.Spec.Template.Spec.Containers[i]
				}
			}
		}
	}
	if ctr == nil || !sawConfigMap {
		b.Fatalf("render.Objects made no ConfigMap (%t) or no %s container (%t)", sawConfigMap, render.ServerContainerName, ctr != nil)
	}
	return ctr
}

// prepare writes the server's nats.conf and builds its command.
func (s *floorServer) prepare(b testing.TB, binary string, nc *v1alpha1.NatsCluster, ctr *corev1.Container, files floorFiles, secrets map[string]string) {
	b.Helper()
	conf, _, err := render.MarkedNatsConf(nc)
	if err != nil {
		b.Fatal(err)
	}
	if conf.Cluster == nil || conf.JetStream == nil {
		b.Fatalf("the rendered config has no cluster (%v) or no jetstream (%v) block", conf.Cluster, conf.JetStream)
	}
	if (conf.Cluster.TLS != nil) != (files.routeTLSDir != "") {
		b.Fatalf("the rendered cluster block has route TLS %t, the floor made a route certificate %t", conf.Cluster.TLS != nil, files.routeTLSDir != "")
	}
	if t := conf.Cluster.TLS; t != nil {
		for _, f := range []*string{&t.CertFile, &t.KeyFile, &t.CAFile} {
			*f = strings.Replace(*f, render.RouteTLSDir, files.routeTLSDir, 1)
		}
	}
	if t := conf.TLS; t != nil {
		for _, f := range []*string{&t.CertFile, &t.KeyFile, &t.CAFile} {
			*f = strings.Replace(*f, render.ClientTLSDir, files.clientTLSDir, 1)
		}
	}
	conf.JetStream.StoreDir = strings.Replace(conf.JetStream.StoreDir, render.StoreDir, filepath.Join(s.dir, "data"), 1)
	conf.PidFile = strings.Replace(conf.PidFile, render.PidDir, s.dir, 1)
	text, err := conf.Render()
	if err != nil {
		b.Fatal(err)
	}
	bound, err := bindListenersTo(string(text), s.ip)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(s.dir, "nats.conf")
	if err := os.WriteFile(path, []byte(bound), 0o644); err != nil {
		b.Fatal(err)
	}
	// The passwords come from users.conf beside nats.conf, as the pods
	// mount the users Secret.
	if nc.HasUsersFile() {
		users, _, err := render.UsersConf(nc, render.Credentials{
			Client: secrets[nc.AuthSecretName()+"/"+render.PasswordKey],
			System: secrets[nc.SystemSecretName()+"/"+render.PasswordKey],
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, render.UsersConfKey), []byte(users), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	args := make([]string, len(ctr.Args))
	named := false
	for i, a := range ctr.Args {
		if a == render.ConfigFile {
			a, named = path, true
		}
		args[i] = a
	}
	if !named {
		b.Fatalf("the container's args %q do not name %s", ctr.Args, render.ConfigFile)
	}
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = log.Close() })
	// In a mount namespace where the floor's hosts file is /etc/hosts, as
	// the loopback kubelet runs a pod's server.
	s.cmd = loopback.CommandWithHosts(files.hosts, binary, args...)
	s.cmd.Env = containerEnvFor(b, ctr, s.pod, secrets)
	s.cmd.Dir, s.cmd.Stdout, s.cmd.Stderr = s.dir, log, log
}

// bindListenersTo makes the client, monitoring and route listeners of a
// rendered nats.conf listen on ip, as the loopback kubelet does for a pod:
// a host in the cluster block, and a top-level host at the end (a later
// key wins; the monitoring listener follows the top-level host).
func bindListenersTo(text, ip string) (string, error) {
	const cluster = "\ncluster {\n"
	if strings.Count(text, cluster) != 1 {
		return "", errors.New("the rendered nats.conf has not exactly one top-level cluster block")
	}
	host := `host: "` + ip + `"`
	text = strings.Replace(text, cluster, cluster+"  "+host+"\n", 1)
	return text + "# benchmark floor: every listener on this server's own address\n" + host + "\n", nil
}

// waitForFloor polls the servers every 10 ms until all pass the readiness
// probe's check and name the same meta leader.
func waitForFloor(b testing.TB, servers []*floorServer, start time.Time) floorResult {
	b.Helper()
	hc := &http.Client{Timeout: time.Second}
	ips := make([]string, len(servers))
	for i, s := range servers {
		ips[i] = s.ip
	}
	healthy := make([]bool, len(servers))
	var res floorResult
	for {
		all := true
		for i, s := range servers {
			select {
			case <-s.done:
				b.Fatalf("%s exited: %v\n%s", s.pod, s.cmd.ProcessState, s.logTail())
			default:
			}
			if !healthy[i] {
				healthy[i] = s.get(hc, "/healthz?js-server-only=true", nil) == nil
			}
			all = all && healthy[i]
		}
		if all && res.healthy == 0 {
			res.healthy = time.Since(start)
		}
		if all {
			if leader, ok := agreedMetaLeader(hc, ips); ok {
				res.leader, res.metaLeader = time.Since(start), leader
				return res
			}
		}
		if time.Since(start) > floorTimeout {
			b.Fatalf("the floor's servers not up within %s (healthy %v); %s said:\n%s", floorTimeout, healthy, servers[0].pod, servers[0].logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// agreedMetaLeader is the JetStream meta leader when the servers at every
// one of ips name the same one.
func agreedMetaLeader(hc *http.Client, ips []string) (string, bool) {
	leader := ""
	for _, ip := range ips {
		var j struct {
			Meta *struct {
				Leader string `json:"leader"`
			} `json:"meta_cluster"`
		}
		if err := monitorGet(hc, ip, "/jsz", &j); err != nil || j.Meta == nil || j.Meta.Leader == "" {
			return "", false
		}
		if leader != "" && j.Meta.Leader != leader {
			return "", false
		}
		leader = j.Meta.Leader
	}
	return leader, true
}

// get GETs path from the server's monitoring port (see monitorGet).
func (s *floorServer) get(hc *http.Client, path string, out any) error {
	return monitorGet(hc, s.ip, path, out)
}

// monitorGet GETs path from the monitoring port of the server at ip,
// wanting 200, and decodes the JSON answer into out unless it is nil.
func monitorGet(hc *http.Client, ip, path string, out any) error {
	resp, err := hc.Get("http://" + net.JoinHostPort(ip, strconv.Itoa(render.MonitorPort)) + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// stop ends the server (SIGTERM, SIGKILL to its group after 10 s) and
// waits for it; safe to call more than once, and for a server never
// started.
func (s *floorServer) stop() {
	s.stopOnce.Do(func() {
		if s.cmd == nil || s.cmd.Process == nil {
			return
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	})
}

// logTail is the end of the server's output, for failure messages.
func (s *floorServer) logTail() string {
	data, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	const keep = 4000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return string(data)
}
