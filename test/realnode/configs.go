package realnode

import (
	"fmt"
	"path/filepath"
)

// NodeZone is the node's topology.kubernetes.io/zone label.
const NodeZone = "realnode-zone-a"

// The node's addresses and names. Fixed: one real node per machine.
const (
	nodeName    = "realnode"
	nodeZone    = NodeZone
	nodeRegion  = "realnode-region"
	bridgeName  = "kubenats0"
	podCIDR     = "10.244.0.0/24"
	nodeIP      = "10.244.0.1" // the bridge's: the API server, kubelet and CoreDNS listen here
	serviceCIDR = "10.0.0.0/24"
	apiServerIP = "10.0.0.1"  // the kubernetes Service
	clusterDNS  = "10.0.0.10" // the kube-dns Service, CoreDNS behind it
	apiPort     = 6443
	// cgroupRoot holds every pod's cgroup (the kubelet's --cgroup-root),
	// in every hierarchy: one directory to sweep.
	cgroupRoot = "kubenats-realnode"
	// sandboxImage is the pause image's name in containerd's config and in
	// `make node-images` (hack/image's PauseImage).
	sandboxImage = "registry.k8s.io/pause:3.6"
)

// containerdConfig keeps containerd to the node's directory: its root,
// state (with the pods' network namespaces), socket and CNI configuration;
// runc with cgroupfs, as the kubelet. restrict_oom_score_adj: the kubelet
// asks for -998 for a sandbox, and a process may set an oom_score_adj
// below its own only with CAP_SYS_RESOURCE, which the machines this runs
// on do not give root (runc then fails with "can't get final child's PID
// from pipe"); containerd raises what is asked to its own.
func containerdConfig(dir string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %[3]q

[ttrpc]
  address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
`, filepath.Join(dir, "containerd", "root"), filepath.Join(dir, "containerd", "state"), containerdSocket(dir),
		filepath.Join(dir, "containerd", "opt"), sandboxImage, filepath.Join(dir, "cni", "net.d"))
}

func containerdSocket(dir string) string { return filepath.Join(dir, "containerd", "containerd.sock") }

// cniConfig: the bridge plugin on kubenats0 (made by the node, with the
// gateway address already on it) and host-local addresses from podCIDR,
// kept in the node's directory. No masquerading: nothing leaves the
// machine. Hairpin, so a pod reaches itself through a Service.
func cniConfig(dir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "kubenats-realnode",
  "plugins": [{
    "type": "bridge",
    "bridge": %q,
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": %q, "gateway": %q}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": %q
    }
  }]
}
`, bridgeName, podCIDR, nodeIP, filepath.Join(dir, "cni", "ipam"))
}

// kubeletConfig: cgroup v1 allowed (this machine's kind has it), cgroupfs
// under cgroupRoot, swap tolerated, no image garbage collection (the
// images cannot be pulled again), eviction only when nearly full, and
// authentication and authorization of its API by the API server.
func kubeletConfig(dir string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
cgroupRoot: /%s
cgroupsPerQOS: true
containerRuntimeEndpoint: unix://%s
address: %s
port: 10250
readOnlyPort: 0
healthzPort: 0
clusterDNS: [%s]
clusterDomain: cluster.local
resolvConf: %s
podLogsDir: %s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {}
authorization:
  mode: Webhook
serializeImagePulls: false
syncFrequency: 10s
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 5s
`, cgroupRoot, containerdSocket(dir), nodeIP, clusterDNS, filepath.Join(dir, "resolv.conf"),
		filepath.Join(dir, "pod-logs"))
}

// kubeProxyConfig: iptables mode, the pods' CIDR as the cluster's, node
// ports only on the bridge's address, and the kernel's conntrack settings
// left as they are.
func kubeProxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
mode: iptables
clusterCIDR: %s
bindAddress: %s
healthzBindAddress: %s:10256
metricsBindAddress: %s:10249
nodePortAddresses: ["%s/32"]
iptables:
  syncPeriod: 30s
  minSyncPeriod: 0s
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, nodeName, podCIDR, nodeIP, nodeIP, nodeIP, nodeIP)
}

// corefile: CoreDNS answers the cluster's names from the API server on
// the bridge's address (behind the kube-dns Service), and nothing else:
// the machine has no outside to forward to.
func corefile(kubeconfig string) string {
	return fmt.Sprintf(`.:53 {
    bind %s
    errors
    ready %s:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`, nodeIP, nodeIP, kubeconfig)
}

// HostAddress is the node's address on the pods' bridge: a server a test
// runs on the host there (an object store, say) is reachable from every
// pod, as a store outside the cluster is from a real one.
func HostAddress() string { return nodeIP }
