// Package realnode runs a whole single-node Kubernetes cluster on this
// machine, with the real node components in place of the loopback
// kubelet: the loopback cluster's control plane (kube-apiserver, etcd,
// kube-controller-manager with every controller a node needs: service
// account tokens, endpoints), kube-scheduler, a real kubelet, containerd
// and runc, the CNI bridge and host-local plugins on a bridge of its own,
// kube-proxy in iptables mode, CoreDNS as the cluster's DNS server behind
// the kube-dns Service, a default StorageClass of local volumes, and the
// project's images (`make node-images`) imported into containerd.
//
// Everything lives on this machine's own addresses: the bridge kubenats0
// holds 10.244.0.1/24, the pods' network; the API server, the kubelet and
// CoreDNS listen on that address, Services take 10.0.0.0/24. It needs
// root, cgroups (v1 or v2) and the binaries of `make test-bins`;
// Unusable says why a machine cannot run it.
//
// Only one real node runs on a machine at a time: its directory, bridge,
// cgroups and iptables chains have fixed names. Stop removes everything it
// made (processes, containers, mounts, network namespaces, the bridge,
// iptables chains, cgroups, the directory) and restores the kernel
// settings the kubelet, kube-proxy and the CNI plugins changed; Start does
// the same first for whatever a killed run left behind.
package realnode
