package loopback

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The mesh model through the loopback kubelet, with Istio's own injector:
// pods are injected by the API server's webhook, the kubelet runs their
// sidecars, PeerAuthentications come from the API server.

// meshConf is a three-server cluster's nats.conf, in the container's paths.
const meshConf = `server_name: $SERVER_NAME
port: 4222
http_port: 8222
cluster {
  name: mesh
  port: 6222
  no_advertise: true
  connect_retries: -1
  routes: ["nats://nats-0.nats:6222", "nats://nats-1.nats:6222", "nats://nats-2.nats:6222"]
}
`

// meshNamespace creates a namespace with the servers' config and headless
// Service.
func meshNamespace(t *testing.T, c *Cluster, name string) string {
	t.Helper()
	ctx := context.Background()
	must(t, c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	must(t, c.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "nats-config"},
		Data: map[string]string{"nats.conf": meshConf}}))
	must(t, c.Client.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "nats"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
			Selector: map[string]string{"app": "nats"},
			Ports: []corev1.ServicePort{
				{Name: "tcp-client", Port: 4222}, {Name: "tcp-cluster", Port: 6222}, {Name: "http-monitor", Port: 8222}}}}))
	return name
}

// meshStatefulSet is the servers, labelled for injection or not.
func meshStatefulSet(ns string, replicas int32, inject bool) *appsv1.StatefulSet {
	labels := map[string]string{"app": "nats"}
	podLabels := map[string]string{"app": "nats"}
	if inject {
		podLabels["sidecar.istio.io/inject"] = "true"
	}
	probe := func(path string, failures int32) *corev1.Probe {
		return &corev1.Probe{PeriodSeconds: 1, FailureThreshold: failures, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("monitor")}}}
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas), ServiceName: "nats", PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels,
					Annotations: map[string]string{istioProxyConfigAnnotation: "terminationDrainDuration: 7s\n"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					ServiceAccountName:            "nats",
					Containers: []corev1.Container{{
						Name: "nats", Image: "nats:2.15.3-alpine",
						Command: []string{"nats-server"},
						Args:    []string{"--config", "/etc/nats-config/nats.conf"},
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "SERVER_NAME", Value: `"$(POD_NAME)"`},
						},
						Ports: []corev1.ContainerPort{
							{Name: "client", ContainerPort: 4222}, {Name: "cluster", ContainerPort: 6222}, {Name: "monitor", ContainerPort: 8222}},
						VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/nats-config"}},
						StartupProbe:   probe("/healthz", 60),
						ReadinessProbe: probe("/healthz?js-enabled-only=true", 2),
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "nats-config"}}}}},
				},
			},
		},
	}
}

// TestIstioInjectsLabelledPods: Istio's own injector, called by the API
// server, gives a pod labelled sidecar.istio.io/inject=true its proxy (a
// native sidecar on this Kubernetes version), istio-init, the status
// annotation and kubelet probes rewritten to the agent; the kubelet runs
// the sidecar, reports istio-proxy ready, and the rewritten probes pass
// through the agent while the app container runs unchanged behind the
// sidecar. A pod without the label is left as it is.
func TestIstioInjectsLabelledPods(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ns := meshNamespace(t, c, "mesh-inject")
	must(t, c.Client.Create(context.Background(), meshStatefulSet(ns, 1, true)))
	pod := readyPod(t, c, ns, "nats-0", 0)

	if pod.Annotations[istioStatusAnnotation] == "" {
		t.Errorf("no %s annotation: %v", istioStatusAnnotation, pod.Annotations)
	}
	proxy, native := injectedProxy(pod)
	if proxy == nil || !native {
		t.Fatalf("istio-proxy %v, native sidecar %v: want a native sidecar init container on Kubernetes 1.37", proxy != nil, native)
	}
	if len(pod.Spec.InitContainers) == 0 || pod.Spec.InitContainers[0].Name != istioInitContainer {
		t.Errorf("init containers %v, want istio-init first", containerNames(pod.Spec.InitContainers))
	}
	app := findContainer(pod, natsContainerName)
	for kind, p := range map[string]*corev1.Probe{"startupz": app.StartupProbe, "readyz": app.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.IntValue() != istioAgentPort || p.HTTPGet.Path != "/app-health/nats/"+kind {
			t.Errorf("%s probe %+v, want the agent's /app-health/nats/%s on %d", kind, p, kind, istioAgentPort)
		}
	}
	spec, _ := proxyOf(pod)
	if got := spec.probers["/app-health/nats/readyz"]; got.HTTPGet == nil || got.HTTPGet.Path != "/healthz?js-enabled-only=true" ||
		got.HTTPGet.Port.IntValue() != 8222 {
		t.Errorf("the agent's readiness prober %+v, want the original probe on 8222", got.HTTPGet)
	}
	if spec.drain != 7*time.Second {
		t.Errorf("drain %s, want the annotation's 7s", spec.drain)
	}
	if app.Command[0] != "nats-server" || strings.Join(app.Args, " ") != "--config /etc/nats-config/nats.conf" {
		t.Errorf("the app container's command changed: %v %v", app.Command, app.Args)
	}
	var proxyStatus *corev1.ContainerStatus
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		switch {
		case cs.Name == istioProxyContainer:
			proxyStatus = cs
		case cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0:
			t.Errorf("init container %s: %+v, want completed", cs.Name, cs.State)
		}
	}
	if proxyStatus == nil || !proxyStatus.Ready || proxyStatus.State.Running == nil {
		t.Fatalf("istio-proxy status %+v, want running and ready", proxyStatus)
	}

	// The server listens behind the sidecar: on the app address, and the
	// pod's own address is the sidecar's (a plaintext client of a
	// PERMISSIVE port waits for ever for INFO).
	if _, err := routesOf(c.Mesh.AppIP(ns, "nats-0")); err != nil {
		t.Errorf("the server does not answer on the app address: %v", err)
	}
	if line, err := firstLine(c.PodIP(ns, "nats-0")+":4222", "", silenceWindow); line != "" {
		t.Errorf("a plaintext client got %q (%v) through the sidecar of a PERMISSIVE port", line, err)
	}

	// Not labelled: not injected, served on the pod's address.
	plain := meshNamespace(t, c, "mesh-noinject")
	must(t, c.Client.Create(context.Background(), meshStatefulSet(plain, 1, false)))
	other := readyPod(t, c, plain, "nats-0", 0)
	if p, _ := injectedProxy(other); p != nil || other.Annotations[istioStatusAnnotation] != "" || len(other.Spec.InitContainers) != 0 {
		t.Errorf("a pod without the label was injected: %v, %v", containerNames(other.Spec.InitContainers), other.Annotations)
	}
	if line, err := firstLine(c.PodIP(plain, "nats-0")+":4222", "", silenceWindow); !strings.HasPrefix(line, "INFO ") {
		t.Errorf("a pod outside the mesh: %q, %v; want INFO", line, err)
	}
}

func containerNames(cs []corev1.Container) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// setPeerAuthentication creates or replaces a PeerAuthentication selecting
// the servers.
func setPeerAuthentication(t *testing.T, c *Cluster, ns, mode string, portLevel map[string]string) {
	t.Helper()
	pa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
		"metadata": map[string]any{"namespace": ns, "name": "nats"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "nats"}},
			"mtls":     map[string]any{"mode": mode},
		},
	}}
	if len(portLevel) > 0 {
		ports := map[string]any{}
		for port, m := range portLevel {
			ports[port] = map[string]any{"mode": m}
		}
		pa.Object["spec"].(map[string]any)["portLevelMtls"] = ports
	}
	ctx := context.Background()
	existing := &unstructured.Unstructured{}
	existing.SetAPIVersion("security.istio.io/v1")
	existing.SetKind("PeerAuthentication")
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "nats"}, existing); err == nil {
		pa.SetResourceVersion(existing.GetResourceVersion())
		must(t, c.Client.Update(ctx, pa))
		return
	}
	must(t, c.Client.Create(ctx, pa))
}

// waitMode waits until the pod's sidecar applies mode on its port (once
// istiod's push reached it).
func waitMode(t *testing.T, c *Cluster, ns, pod string, port int32, want MTLSMode) {
	t.Helper()
	eventually(t, func() error {
		c.Mesh.mu.Lock()
		s := c.Mesh.workloads[types.NamespacedName{Namespace: ns, Name: pod}]
		c.Mesh.mu.Unlock()
		if s == nil {
			return fmt.Errorf("%s/%s has no sidecar", ns, pod)
		}
		if got := s.mode(port); got != want {
			return fmt.Errorf("%s/%s port %d: mode %s, want %s", ns, pod, port, got, want)
		}
		return nil
	})
}

// meshedNATS connects a meshed client of the test process.
func meshedNATS(t *testing.T, c *Cluster, url string) (*nats.Conn, error) {
	t.Helper()
	return nats.Connect(url, nats.SetCustomDialer(meshDialer(t, c)), nats.NoReconnect(), nats.Timeout(5*time.Second))
}

type dialerFunc func(network, address string) (net.Conn, error)

func (f dialerFunc) Dial(network, address string) (net.Conn, error) { return f(network, address) }
