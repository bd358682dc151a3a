package loopback

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Cluster DNS for the servers, inside the harness only. Each pod's
// nats-server runs in a mount namespace of its own whose /etc/hosts is its
// namespace's hosts file (hostsFile), so it resolves pod DNS names itself,
// as in a real cluster, and verifies route certificates against the names
// it dialed. A name exists only while its pod holds an address: as with
// cluster DNS, a pod that does not exist yet cannot be resolved, and a new
// pod appears within the resolver's cache time (Go's: 5 s).

// dnsRecord is one pod's entry: hostname.subdomain in its namespace, and
// what the mesh reads of the pod (the endpoints istiod knows).
type dnsRecord struct {
	ns, pod, hostname, subdomain, ip string
	labels                           map[string]string
	serviceAccount                   string
	ports                            []int32
}

// dnsTable keeps the records and writes the hosts files.
type dnsTable struct {
	dir string

	// view, when the cluster runs the mesh, is how a meshed pod's own
	// hosts file shows each record (Mesh.hostsView).
	view func(src types.NamespacedName, records []dnsRecord) func(dnsRecord) string
	// recordsChanged, when set, is called (outside the lock) after a
	// record came or went: the mesh's endpoints changed.
	recordsChanged func()

	mu      sync.Mutex
	records map[types.UID]dnsRecord
	written map[string][]byte // by namespace
	// podFiles are the meshed pods' own hosts files, by pod UID, and
	// podWritten what each holds.
	podFiles   map[types.UID]types.NamespacedName
	podWritten map[types.UID][]byte
}

func newDNSTable(dir string) *dnsTable {
	return &dnsTable{dir: dir, records: map[types.UID]dnsRecord{}, written: map[string][]byte{},
		podFiles: map[types.UID]types.NamespacedName{}, podWritten: map[types.UID][]byte{}}
}

// podHostsFile is the /etc/hosts of one meshed pod: its sidecar's view of
// the cluster (meshed destinations at addresses of its own sidecar). It
// is written before it is returned, and kept up to date until remove.
func (d *dnsTable) podHostsFile(uid types.UID, pod types.NamespacedName) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.podFiles[uid] = pod
	return d.podFilePath(uid), d.writeLocked(pod.Namespace)
}

func (d *dnsTable) podFilePath(uid types.UID) string {
	return filepath.Join(d.dir, "pod-"+string(uid)+".hosts")
}

// refresh rewrites the files whose content changed: the mesh's set of
// meshed pods changed.
func (d *dnsTable) refresh() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writeLocked("")
}

// hostsFile is the /etc/hosts of the pods in namespace ns.
func (d *dnsTable) hostsFile(ns string) string {
	return filepath.Join(d.dir, ns+".hosts")
}

// resolvConf sends what the hosts file does not know to a name server on
// this machine's loopback that does not exist: the lookup fails at once
// ("no such host", as cluster DNS answers for a pod that is gone), and no
// query leaves the machine.
const resolvConf = "# loopback cluster DNS: names not in /etc/hosts do not exist\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n"

// add records a pod that now holds ip, if it has a DNS name (a hostname
// and the subdomain of a headless Service), and rewrites the files.
func (d *dnsTable) add(pod *corev1.Pod, ip string, headless func(ns, svc string) bool) error {
	name := pod.Spec.Hostname
	if name == "" {
		name = pod.Name
	}
	d.mu.Lock()
	added := false
	if pod.Spec.Subdomain != "" && headless(pod.Namespace, pod.Spec.Subdomain) {
		d.records[pod.UID] = dnsRecord{ns: pod.Namespace, pod: pod.Name, hostname: name, subdomain: pod.Spec.Subdomain, ip: ip,
			labels: pod.Labels, serviceAccount: serviceAccountOf(pod), ports: tcpPorts(pod)}
		added = true
	}
	err := d.writeLocked(pod.Namespace)
	hook := d.recordsChanged
	d.mu.Unlock()
	if added && hook != nil {
		hook()
	}
	return err
}

// serviceAccountOf is the pod's service account ("default" unset).
func serviceAccountOf(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName == "" {
		return "default"
	}
	return pod.Spec.ServiceAccountName
}

// tcpPorts are the TCP ports the pod's app containers declare.
func tcpPorts(pod *corev1.Pod) []int32 {
	var out []int32
	for _, c := range pod.Spec.Containers {
		if c.Name == istioProxyContainer {
			continue
		}
		for _, p := range c.Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				out = append(out, p.ContainerPort)
			}
		}
	}
	return out
}

// endpoints are the records as the mesh's endpoints.
func (d *dnsTable) endpoints() []meshEndpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]meshEndpoint, 0, len(d.records))
	for _, r := range d.records {
		out = append(out, meshEndpoint{Pod: types.NamespacedName{Namespace: r.ns, Name: r.pod}, IP: r.ip,
			Labels: r.labels, ServiceAccount: r.serviceAccount, Ports: r.ports})
	}
	return out
}

// remove forgets a pod whose process is gone.
func (d *dnsTable) remove(uid types.UID) error {
	d.mu.Lock()
	if _, ok := d.podFiles[uid]; ok {
		delete(d.podFiles, uid)
		delete(d.podWritten, uid)
		_ = os.Remove(d.podFilePath(uid))
	}
	if _, ok := d.records[uid]; !ok {
		d.mu.Unlock()
		return nil
	}
	delete(d.records, uid)
	err := d.writeLocked("")
	hook := d.recordsChanged
	d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return err
}

// lookup is the address of hostname.subdomain in namespace ns, as the
// hosts files have it: only a pod that exists and holds an address has one.
func (d *dnsTable) lookup(ns, hostname, subdomain string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.records {
		if r.ns == ns && r.hostname == hostname && r.subdomain == subdomain {
			return r.ip, true
		}
	}
	return "", false
}

// writeLocked rewrites every namespace's file whose content changed (and
// ns's, so that it exists before a pod of ns starts). A file is written in
// place: it is bind-mounted by inode into running processes.
func (d *dnsTable) writeLocked(ns string) error {
	namespaces := map[string]bool{}
	if ns != "" {
		namespaces[ns] = true
	}
	for n := range d.written {
		namespaces[n] = true
	}
	for _, r := range d.records {
		namespaces[r.ns] = true
	}
	for n := range namespaces {
		content := d.contentLocked(n)
		if bytes.Equal(d.written[n], content) {
			continue
		}
		if err := os.WriteFile(d.hostsFile(n), content, 0o644); err != nil {
			return err
		}
		d.written[n] = content
	}
	if d.view == nil || len(d.podFiles) == 0 {
		return nil
	}
	records := d.recordsLocked()
	for uid, pod := range d.podFiles {
		content := hostsFileContent(pod.Namespace, records, d.view(pod, records))
		if bytes.Equal(d.podWritten[uid], content) {
			continue
		}
		if err := os.WriteFile(d.podFilePath(uid), content, 0o644); err != nil {
			return err
		}
		d.podWritten[uid] = content
	}
	return nil
}

func (d *dnsTable) recordsLocked() []dnsRecord {
	records := make([]dnsRecord, 0, len(d.records))
	for _, r := range d.records {
		records = append(records, r)
	}
	return records
}

// contentLocked is the hosts file seen from namespace ns.
func (d *dnsTable) contentLocked(ns string) []byte {
	return hostsFileContent(ns, d.recordsLocked(), func(r dnsRecord) string { return r.ip })
}

// hostsFileContent is a hosts file seen from namespace ns: every pod in
// every fully qualified form, and the short <pod>.<service> form of ns's
// own, each at the address addressOf gives (a meshed pod's view differs).
func hostsFileContent(ns string, records []dnsRecord, addressOf func(dnsRecord) string) []byte {
	var lines []string
	for _, r := range records {
		base := r.hostname + "." + r.subdomain
		fq := base + "." + r.ns
		names := fq + " " + fq + ".svc " + fq + ".svc." + clusterDomain
		if r.ns == ns {
			names = base + " " + names
		}
		lines = append(lines, fmt.Sprintf("%s %s", addressOf(r), names))
	}
	sort.Strings(lines)
	var b bytes.Buffer
	b.WriteString("# loopback cluster DNS, as seen from namespace " + ns + "\n127.0.0.1 localhost\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// PodDNSRecord is one pod's entry for HostsFileContent: Hostname.Subdomain
// in Namespace, at IP.
type PodDNSRecord struct {
	Namespace, Hostname, Subdomain, IP string
}

// HostsFileContent is the /etc/hosts of a pod in namespace ns that
// resolves records as cluster DNS does. Benchmarks that start servers by
// hand give them the same file (CommandWithHosts).
func HostsFileContent(ns string, records []PodDNSRecord) []byte {
	in := make([]dnsRecord, len(records))
	for i, r := range records {
		in[i] = dnsRecord{ns: r.Namespace, pod: r.Hostname, hostname: r.Hostname, subdomain: r.Subdomain, ip: r.IP}
	}
	return hostsFileContent(ns, in, func(r dnsRecord) string { return r.ip })
}
