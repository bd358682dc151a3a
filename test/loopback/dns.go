package loopback

import "strings"

// Cluster DNS names, for clients in the test process (Cluster.Dial); the
// servers resolve them through their hosts files (hosts.go).

// clusterDomain is the DNS suffix a fully qualified service name may carry.
const clusterDomain = "cluster.local"

// podDNSName splits the forms under which cluster DNS answers for a pod of
// a headless Service: <pod>.<service>, <pod>.<service>.<ns>,
// <pod>.<service>.<ns>.svc and <pod>.<service>.<ns>.svc.cluster.local. ns is
// empty in the short form, which resolves in the asking pod's namespace.
func podDNSName(host string) (pod, service, ns string, ok bool) {
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(host), "."), ".")
	if len(labels) < 2 || len(labels) == 5 || len(labels) > 6 {
		return "", "", "", false
	}
	if len(labels) >= 4 && labels[3] != "svc" {
		return "", "", "", false
	}
	if len(labels) == 6 && labels[4]+"."+labels[5] != clusterDomain {
		return "", "", "", false
	}
	pod, service = labels[0], labels[1]
	if len(labels) >= 3 {
		ns = labels[2]
	}
	return pod, service, ns, pod != "" && service != ""
}
