package loopback

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Cluster DNS, inside the harness only. The suggested shape: every
// (namespace, pod name) gets a stable address the first time anyone asks,
// even before that pod exists (addresses.go); a pod DNS name resolves to
// it once the headless Service the name goes through exists.

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

// resolver answers cluster DNS names of pods (see podDNSName) asked from
// namespace ns: the name of a headless Service's pod resolves to that pod's
// stable address, whether or not the pod exists yet, as long as the Service
// does.
func (k *kubelet) resolver(ns string) func(host string) (string, bool) {
	return func(host string) (string, bool) {
		pod, service, podNS, ok := podDNSName(host)
		if !ok {
			return "", false
		}
		if podNS == "" {
			podNS = ns
		}
		svc, err := k.services.Services(podNS).Get(service)
		if err != nil || svc.Spec.ClusterIP != corev1.ClusterIPNone {
			return "", false
		}
		ip, err := k.addrs.address(podNS, pod)
		return ip, err == nil
	}
}
