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

// PodDNSRecord is one pod's entry: Hostname.Subdomain in Namespace, at IP.
type PodDNSRecord struct {
	Namespace, Hostname, Subdomain, IP string
}

// dnsTable keeps the records and writes the hosts files.
type dnsTable struct {
	dir string

	mu      sync.Mutex
	records map[types.UID]PodDNSRecord
	written map[string][]byte // by namespace
}

func newDNSTable(dir string) *dnsTable {
	return &dnsTable{dir: dir, records: map[types.UID]PodDNSRecord{}, written: map[string][]byte{}}
}

// hostsFile is the /etc/hosts of the pods in namespace ns.
func (d *dnsTable) hostsFile(ns string) string {
	return filepath.Join(d.dir, ns+".hosts")
}

// add records a pod that now holds ip, if it has a DNS name (a hostname
// and the subdomain of a headless Service), and rewrites the files.
func (d *dnsTable) add(pod *corev1.Pod, ip string, headless func(ns, svc string) bool) error {
	name := pod.Spec.Hostname
	if name == "" {
		name = pod.Name
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if pod.Spec.Subdomain != "" && headless(pod.Namespace, pod.Spec.Subdomain) {
		d.records[pod.UID] = PodDNSRecord{Namespace: pod.Namespace, Hostname: name, Subdomain: pod.Spec.Subdomain, IP: ip}
	}
	return d.writeLocked(pod.Namespace)
}

// remove forgets a pod whose process is gone.
func (d *dnsTable) remove(uid types.UID) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.records[uid]; !ok {
		return nil
	}
	delete(d.records, uid)
	return d.writeLocked("")
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
		namespaces[r.Namespace] = true
	}
	for n := range namespaces {
		records := make([]PodDNSRecord, 0, len(d.records))
		for _, r := range d.records {
			records = append(records, r)
		}
		content := HostsFileContent(n, records)
		if bytes.Equal(d.written[n], content) {
			continue
		}
		if err := os.WriteFile(d.hostsFile(n), content, 0o644); err != nil {
			return err
		}
		d.written[n] = content
	}
	return nil
}

// HostsFileContent is the /etc/hosts of a pod in namespace ns that
// resolves records as cluster DNS does: every pod in every fully qualified
// form, and the short <pod>.<service> form of ns's own. Benchmarks that start
// servers by hand give them the same file (CommandWithHosts).
func HostsFileContent(ns string, records []PodDNSRecord) []byte {
	var lines []string
	for _, r := range records {
		base := r.Hostname + "." + r.Subdomain
		fq := base + "." + r.Namespace
		names := fq + " " + fq + ".svc " + fq + ".svc." + clusterDomain
		if r.Namespace == ns {
			names = base + " " + names
		}
		lines = append(lines, fmt.Sprintf("%s %s", r.IP, names))
	}
	sort.Strings(lines)
	var b bytes.Buffer
	b.WriteString("# loopback cluster DNS, as seen from namespace " + ns + "\n127.0.0.1 localhost\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}
