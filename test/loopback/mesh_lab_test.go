package loopback

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// meshLab runs real nats-servers as pods of one namespace, each in its own
// mount namespace with its own hosts file, some behind a sidecar of the
// mesh model: the model's own tests, without a control plane.
type meshLab struct {
	t       *testing.T
	dir     string
	binary  string
	reaper  *reaper
	addrs   *addressBook
	mesh    *Mesh
	pods    map[string]*labPod
	records []dnsRecord
}

type labPod struct {
	w       meshWorkload
	meshed  bool
	proc    *process
	logPath string
}

const labNS = "mesh"

func newMeshLab(t *testing.T) *meshLab {
	t.Helper()
	root, err := findRepoRoot()
	must(t, err)
	must(t, runBuild(BuildNatsServers))
	binary, _, err := binaryFor(filepath.Join(root, "bin", "nats-server"), "nats:2.15.3")
	must(t, err)
	l := &meshLab{t: t, dir: t.TempDir(), binary: binary, pods: map[string]*labPod{}}
	l.reaper, err = startReaper()
	must(t, err)
	l.addrs, err = newAddressBook()
	must(t, err)
	l.mesh, err = newMesh(l.addrs, t.Logf)
	must(t, err)
	l.mesh.listEndpoints = l.endpoints
	l.mesh.listServices = func() []meshService { return []meshService{labService} }
	t.Cleanup(func() {
		for _, p := range l.pods {
			if p.proc != nil {
				p.proc.kill()
				<-p.proc.done
			}
			if p.meshed {
				l.mesh.stopSidecar(p.w.Pod, 0)
			}
		}
		l.reaper.stop()
		l.addrs.close()
	})
	return l
}

// labService is the lab's headless Service "nats", its ports declared as
// the operator declares them.
var labService = meshService{Namespace: labNS, Name: "nats", Headless: true, Selector: map[string]string{"app": "nats"},
	Ports: map[int32]meshProtocol{4222: protocolTCP, 6222: protocolTCP, 8222: protocolHTTP}}

// endpoints are the lab's pods as istiod knows them.
func (l *meshLab) endpoints() []meshEndpoint {
	var out []meshEndpoint
	for _, r := range l.records {
		out = append(out, meshEndpoint{Pod: types.NamespacedName{Namespace: r.ns, Name: r.pod}, IP: r.ip,
			Labels: r.labels, ServiceAccount: r.serviceAccount, Ports: r.ports})
	}
	return out
}

// pod declares pod name (a member of the headless Service "nats"), with a
// sidecar or not (injected: labelled for mTLS); its sidecar starts at
// once, before its server.
func (l *meshLab) pod(name string, meshed bool) *labPod {
	l.t.Helper()
	ip, err := l.mesh.addrs.address(labNS, name)
	must(l.t, err)
	podLabels := map[string]string{"app": "nats"}
	if meshed {
		podLabels[istioTLSModeLabel] = "istio"
	}
	p := &labPod{meshed: meshed, logPath: filepath.Join(l.dir, name+".log"), w: meshWorkload{
		Pod: types.NamespacedName{Namespace: labNS, Name: name}, IP: ip, ServiceAccount: "nats",
		Labels: podLabels, Ports: []int32{4222, 6222, 8222}, Capture: captureAll,
	}}
	l.pods[name] = p
	l.records = append(l.records, dnsRecord{ns: labNS, pod: name, hostname: name, subdomain: "nats", ip: ip,
		labels: podLabels, serviceAccount: "nats", ports: p.w.Ports})
	l.mesh.push()
	if meshed {
		_, err := l.mesh.startSidecar(p.w)
		must(l.t, err)
	}
	return p
}

// listenIP is where the pod's server binds: the app address behind a
// sidecar, the pod's own otherwise.
func (l *meshLab) listenIP(p *labPod) string {
	if p.meshed {
		return l.mesh.AppIP(labNS, p.w.Pod.Name)
	}
	return p.w.IP
}

// start runs the pod's nats-server, routed to every pod declared so far.
func (l *meshLab) start(p *labPod) {
	l.t.Helper()
	name := p.w.Pod.Name
	var routes []string
	for _, r := range l.records {
		routes = append(routes, fmt.Sprintf("nats://%s.nats:6222", r.pod))
	}
	ip := l.listenIP(p)
	conf := fmt.Sprintf("server_name: %s\nlisten: \"%s:4222\"\nhttp: \"%s:8222\"\ncluster {\n  name: lab\n  listen: \"%s:6222\"\n  no_advertise: true\n  connect_retries: -1\n  routes: [%s]\n}\n",
		name, ip, ip, ip, strings.Join(routes, ", "))
	confPath := filepath.Join(l.dir, name+".conf")
	must(l.t, os.WriteFile(confPath, []byte(conf), 0o644))
	hosts := filepath.Join(l.dir, name+".hosts")
	must(l.t, os.WriteFile(hosts, hostsFileContent(labNS, l.records, l.mesh.hostsView(p.w.Pod, l.records)), 0o644))
	proc, err := startProcess(l.reaper, l.binary, []string{"-c", confPath}, nil, l.dir, p.logPath, hosts)
	must(l.t, err)
	p.proc = proc
	l.waitServing(p)
}

// waitServing waits for the server's monitor port, read where the agent
// reads it (the app address behind a sidecar).
func (l *meshLab) waitServing(p *labPod) {
	l.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := routesOf(l.listenIP(p)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(p.logPath)
			l.t.Fatalf("%s never served:\n%s", p.w.Pod.Name, data)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (l *meshLab) serverLog(p *labPod) string {
	data, _ := os.ReadFile(p.logPath)
	return string(data)
}
