package e2emetrics_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// forgedPod is the name of a tenant's pod that poses as a server of its
// namespace's NatsCluster.
const forgedPod = "forged-metrics"

// forgedConnections is the value the forged series carry: no real server
// of the test has that many clients.
const forgedConnections = 424242

// startForgedTarget does what a tenant of namespace b can do
// with no right over a: run a pod that carries the labels of b's servers
// (the PodMonitor selects it, render's monitoring comment says so), whose
// metrics port serves series that claim to be a's, with a's namespace
// and cluster as labels. The pod is an object bound to a node of its own
// (no kubelet runs it); its status names an address the test serves the
// forged page on, which is what a scrape of the pod reaches.
func startForgedTarget(t *testing.T, a, b *e2ekit.Formed) {
	t.Helper()
	ctx := e2ekit.Ctx(t)
	ip, err := cluster.HostAddress(b.NS + "/" + forgedPod)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(render.MetricsPort)))
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("nats_varz_connections{namespace=%q,natscluster=%q,server_name=%q} %d\n",
		a.NS, a.Cluster.Name, a.Pods[0], forgedConnections)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(page))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	// A node of its own: no kubelet of the harness runs what is bound to
	// it, and the pod garbage collector keeps pods of a node that exists.
	nodes := cluster.Kubernetes.CoreV1().Nodes()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "forger-" + b.NS}}
	if _, err := nodes.Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	pods := cluster.Kubernetes.CoreV1().Pods(b.NS)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: forgedPod, Labels: render.ManagedSelectorLabels(b.Cluster)},
		Spec: corev1.PodSpec{
			NodeName: node.Name,
			Containers: []corev1.Container{{Name: render.MetricsPortName, Image: "tenant/forger:1",
				Ports: []corev1.ContainerPort{{Name: render.MetricsPortName, ContainerPort: render.MetricsPort}}}},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pods.Delete(context.Background(), forgedPod, metav1.DeleteOptions{}) })
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}}
	if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
