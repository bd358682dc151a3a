package realnode

// The node's components after the control plane, each started and
// waited for: containerd and its images, the kubelet, the scheduler,
// kube-proxy, CoreDNS and the local volumes.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func (n *Node) startContainerd(ctx context.Context) error {
	if err := os.WriteFile(filepath.Join(n.Dir, "cni", "net.d", "10-kubenats.conflist"), []byte(cniConfig(n.Dir)), 0o644); err != nil {
		return err
	}
	conf := filepath.Join(n.Dir, "containerd", "config.toml")
	if err := os.WriteFile(conf, []byte(containerdConfig(n.Dir)), 0o644); err != nil {
		return err
	}
	p, err := n.start("containerd", "containerd", "--config", conf)
	if err != nil {
		return err
	}
	return n.until(ctx, p, time.Minute, "containerd answers", func() error {
		return n.ctr("version")
	})
}

// ctr runs containerd's client on the node's socket, in the kubelet's
// namespace.
func (n *Node) ctr(args ...string) error {
	args = append([]string{"--address", containerdSocket(n.Dir), "--namespace", "k8s.io"}, args...)
	out, err := exec.Command("ctr", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// importImages loads every archive of `make node-images` into containerd,
// under the names in them: the pods find them there and pull nothing.
func (n *Node) importImages(context.Context) error {
	archives, err := filepath.Glob(filepath.Join(n.opts.RepoRoot, "bin", "node-images", "*.oci.tar"))
	if err != nil {
		return err
	}
	if len(archives) == 0 {
		return errors.New("no bin/node-images/*.oci.tar: run `make node-images`")
	}
	for _, a := range archives {
		if err := n.ctr("images", "import", a); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) startKubelet(ctx context.Context) error {
	kc, err := n.plane.Kubeconfig("kubelet", "system:node:"+nodeName, []string{"system:nodes", "system:masters"})
	if err != nil {
		return err
	}
	conf := filepath.Join(n.Dir, "kubelet.yaml")
	if err := os.WriteFile(conf, []byte(kubeletConfig(n.Dir)), 0o644); err != nil {
		return err
	}
	p, err := n.start("kubelet", n.bin("kubelet"),
		"--config="+conf,
		"--kubeconfig="+kc,
		"--hostname-override="+nodeName,
		// A zone, as a cloud's nodes carry: the API server copies it onto
		// each pod it binds here, and the servers read it as their tag.
		"--node-labels="+corev1.LabelTopologyZone+"="+nodeZone+","+corev1.LabelTopologyRegion+"="+nodeRegion,
		"--node-ip="+nodeIP,
		"--root-dir="+filepath.Join(n.Dir, "kubelet"),
		"--cert-dir="+filepath.Join(n.Dir, "kubelet", "pki"),
		"--v=1")
	if err != nil {
		return err
	}
	return n.until(ctx, p, 2*time.Minute, "the node is Ready", func() error {
		node, err := n.Kubernetes.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready: %v", nodeName, node.Status.Conditions)
	})
}

func (n *Node) startScheduler(context.Context) error {
	kc, err := n.kubeconfig("kube-scheduler")
	if err != nil {
		return err
	}
	_, err = n.start("kube-scheduler", n.bin("kube-scheduler"),
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false", "--bind-address="+nodeIP, "--secure-port=10259")
	return err
}

// startKubeProxy returns once the kubernetes Service answers from this
// machine through kube-proxy's rules.
func (n *Node) startKubeProxy(ctx context.Context) error {
	kc, err := n.kubeconfig("kube-proxy")
	if err != nil {
		return err
	}
	conf := filepath.Join(n.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(conf, []byte(kubeProxyConfig(kc)), 0o644); err != nil {
		return err
	}
	p, err := n.start("kube-proxy", n.bin("kube-proxy"), "--config="+conf, "--v=1")
	if err != nil {
		return err
	}
	return n.until(ctx, p, time.Minute, "the kubernetes Service answers", func() error {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(apiServerIP, "443"), time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// startCoreDNS runs CoreDNS on the bridge's address behind the kube-dns
// Service (no selector: its EndpointSlice names the node's address), and
// returns once the Service answers a cluster name.
func (n *Node) startCoreDNS(ctx context.Context) error {
	kc, err := n.kubeconfig("coredns")
	if err != nil {
		return err
	}
	conf := filepath.Join(n.Dir, "Corefile")
	if err := os.WriteFile(conf, []byte(corefile(kc)), 0o644); err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "kube-dns", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: clusterDNS,
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
			},
		},
	}
	if err := n.Client.Create(ctx, svc); err != nil {
		return err
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "kube-dns-node",
			Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns", discoveryv1.LabelManagedBy: "realnode"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{nodeIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To(nodeName)}},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("dns"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolUDP)},
			{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolTCP)},
		},
	}
	if err := n.Client.Create(ctx, slice); err != nil {
		return err
	}
	p, err := n.start("coredns", n.bin("coredns"), "-conf", conf)
	if err != nil {
		return err
	}
	r := Resolver()
	return n.until(ctx, p, time.Minute, "cluster DNS answers", func() error {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		addrs, err := r.LookupHost(c, "kubernetes.default.svc.cluster.local")
		if err != nil {
			return err
		}
		if len(addrs) != 1 || addrs[0] != apiServerIP {
			return fmt.Errorf("kubernetes.default.svc.cluster.local is %v, want %s", addrs, apiServerIP)
		}
		return nil
	})
}

// Resolver asks the cluster's DNS server (the kube-dns Service) only, as
// a pod with the default dnsPolicy does.
func Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(clusterDNS, "53"))
	}}
}

// StorageClass is the default StorageClass: local volumes, bound when a
// pod is scheduled.
const StorageClass = "local"

// addStorage makes the default StorageClass and its local volumes, each a
// directory of the node's, bound to this node, kept when released (so a
// claim kept and used again finds its data, as with a real provisioner's
// Retain).
func (n *Node) addStorage(ctx context.Context) error {
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: StorageClass, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
	}
	if err := n.Client.Create(ctx, sc); err != nil {
		return err
	}
	for i := range n.opts.Volumes {
		name := fmt.Sprintf("local-%d", i)
		path := filepath.Join(n.Dir, "volumes", name)
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              StorageClass,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}},
				}}}},
			},
		}
		if err := n.Client.Create(ctx, pv); err != nil {
			return err
		}
	}
	return nil
}
