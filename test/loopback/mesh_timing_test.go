package loopback

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// lameDuckConf: a server whose lame duck keeps clients for 4 s before it
// starts closing them (over nats-server's shortest duration, 30 s).
const lameDuckConf = `server_name: $SERVER_NAME
port: 4222
http_port: 8222
pid_file: "/var/run/nats/nats.pid"
lame_duck_grace_period: "4s"
lame_duck_duration: "30s"
`

// lameDuckGrace is lameDuckConf's grace period.
const lameDuckGrace = 4 * time.Second

// TestIstioProxyStartAndDrain: the proxy's own timing. A native sidecar
// starts before the server and, on deletion, stays until the server has
// exited, so a meshed client keeps its connection through the lame duck's
// grace period; a classic sidecar (the pod's
// sidecar.istio.io/nativeSidecar: "false") starts beside the server, gets
// SIGTERM with it, and cuts the client after its terminationDrainDuration
// (proxy.istio.io/config) while the server is still in lame duck.
func TestIstioProxyStartAndDrain(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns := meshNamespace(t, c, "mesh-timing")
	must(t, c.Client.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-config",
		ResourceVersion: configMapVersion(t, c, ns, "nats-config")}, Data: map[string]string{"nats.conf": lameDuckConf}}))
	for _, name := range []string{"native", "classic"} {
		// A headless Service of its own: a client's sidecar sends mTLS
		// only to pods of a headless Service that declares the port.
		must(t, c.Client.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
				Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Name: "tcp-client", Port: 4222}}}}))
		sts := meshStatefulSet(ns, 1, true)
		sts.Name, sts.Spec.ServiceName = name, name
		sts.Spec.Selector.MatchLabels = map[string]string{"app": name}
		sts.Spec.Template.Labels["app"] = name
		sts.Spec.Template.Annotations[istioProxyConfigAnnotation] = "terminationDrainDuration: 1s\n"
		if name == "classic" {
			sts.Spec.Template.Annotations["sidecar.istio.io/nativeSidecar"] = "false"
		}
		spec := &sts.Spec.Template.Spec
		spec.TerminationGracePeriodSeconds = ptr.To[int64](20)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "pid", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		app := &spec.Containers[0]
		app.VolumeMounts = append(app.VolumeMounts, corev1.VolumeMount{Name: "pid", MountPath: "/var/run/nats"})
		app.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
			Command: []string{"nats-server", "--signal", "ldm=/var/run/nats/nats.pid"}}}}
		must(t, c.Client.Create(ctx, sts))
	}
	native, classic := readyPod(t, c, ns, "native-0", 0), readyPod(t, c, ns, "classic-0", 0)
	if p, isNative := injectedProxy(native); p == nil || !isNative {
		t.Fatal("native-0 has no native sidecar")
	}
	if p, isNative := injectedProxy(classic); p == nil || isNative {
		t.Fatal("classic-0 has no classic istio-proxy container")
	}
	log := c.KubeletLog()
	if proxy, app := strings.Index(log, ns+"/native-0: istio-proxy running"), strings.Index(log, ns+"/native-0: started nats-server"); proxy < 0 || app < proxy {
		t.Errorf("the native sidecar did not start before the server (proxy at %d, app at %d in the kubelet log)", proxy, app)
	}
	if proxy, app := strings.Index(log, ns+"/classic-0: istio-proxy running"), strings.Index(log, ns+"/classic-0: started nats-server"); app < 0 || proxy < app {
		t.Errorf("the classic sidecar did not start after the server (proxy at %d, app at %d in the kubelet log)", proxy, app)
	}

	cut := map[string]time.Duration{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	began := time.Now()
	for _, pod := range []*corev1.Pod{native, classic} {
		closed := make(chan struct{})
		nc, err := nats.Connect("nats://"+c.PodIP(ns, pod.Name)+":4222", nats.SetCustomDialer(meshDialer(t, c)),
			nats.NoReconnect(), nats.Timeout(5*time.Second), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		must(t, err)
		defer nc.Close()
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			select {
			case <-closed:
				mu.Lock()
				cut[name] = time.Since(began)
				mu.Unlock()
			case <-time.After(time.Minute):
			}
		}(pod.Name)
	}
	began = time.Now()
	for _, pod := range []*corev1.Pod{native, classic} {
		must(t, c.Client.Delete(ctx, pod))
	}
	wg.Wait()
	if got, ok := cut["native-0"]; !ok || got < lameDuckGrace {
		t.Errorf("native sidecar: the client was cut after %s (seen %v), want no sooner than the lame duck's %s grace", got, ok, lameDuckGrace)
	}
	if got, ok := cut["classic-0"]; !ok || got >= lameDuckGrace {
		t.Errorf("classic sidecar: the client was cut after %s (seen %v), want at its 1s drain, inside the lame duck's grace", got, ok)
	}
	t.Logf("clients cut after: %v", cut)
}

func meshDialer(t *testing.T, c *Cluster) nats.CustomDialer {
	t.Helper()
	dial, err := c.MeshDialer("apps", "client")
	must(t, err)
	return dialerFunc(dial)
}

func configMapVersion(t *testing.T, c *Cluster, ns, name string) string {
	t.Helper()
	cm, err := c.Kubernetes.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	must(t, err)
	return cm.ResourceVersion
}
