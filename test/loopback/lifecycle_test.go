package loopback

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// probeNamespace makes namespace name with the probe pods' ConfigMap
// (probe-config, nats.conf: probeConf) in it, and returns both.
func probeNamespace(t *testing.T, c *Cluster, name string) (*corev1.Namespace, *corev1.ConfigMap) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	must(t, c.Client.Create(context.Background(), ns))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "probe-config"}, Data: map[string]string{"nats.conf": probeConf}}
	must(t, c.Client.Create(context.Background(), cm))
	return ns, cm
}

// probeConf is the server's nats.conf, in the container's paths.
const probeConf = `server_name: $SERVER_NAME
port: 4222
http_port: 8222
pid_file: "/var/run/nats/nats.pid"
lame_duck_duration: "30s"
lame_duck_grace_period: "10s"
jetstream { store_dir: "/data" }
`

// TestPodLifecycle follows one StatefulSet pod through what the kubelet
// must do: run it with its volumes, refresh them late on a config change
// (and signal nothing), restart
// it after a crash, delete it gracefully (lame duck, then SIGKILL at the
// end of the grace period) so that the StatefulSet replaces it on the same
// claim (at another address: addresses_test.go), and remove the claim's
// directory with the claim.
func TestPodLifecycle(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns, cm := probeNamespace(t, c, "lifecycle")
	must(t, c.Client.Create(ctx, probeStatefulSet(ns.Name)))

	// Running: the pod's own address, its claim as the store, every
	// container reported.
	pod := readyPod(t, c, ns.Name, "probe-0", 0)
	if ip := c.PodIP(ns.Name, "probe-0"); pod.Status.PodIP != ip {
		t.Fatalf("pod IP %s, want the address it holds, %s", pod.Status.PodIP, ip)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready {
			t.Errorf("container %s: %+v, want running and ready", cs.Name, cs.State)
		}
	}
	var js struct {
		Config struct {
			StoreDir string `json:"store_dir"`
		} `json:"config"`
	}
	getJSON(t, pod.Status.PodIP, "/jsz", &js)
	claimDirs, _ := filepath.Glob(filepath.Join(c.Dir, "claims", ns.Name+"_data-probe-0_*"))
	if len(claimDirs) != 1 || !strings.HasPrefix(js.Config.StoreDir, claimDirs[0]) {
		t.Fatalf("store_dir %q, want it in the claim's directory %v", js.Config.StoreDir, claimDirs)
	}
	marker := filepath.Join(claimDirs[0], "marker")
	must(t, os.WriteFile(marker, []byte("kept"), 0o644))

	// A config change reaches the pod's files late, as a kubelet's sync
	// does, and nothing in the pod signals the server: the process runs on
	// with what it loaded until something reloads it.
	mounted := filepath.Join(c.Dir, "pods", ns.Name+"_probe-0_"+string(pod.UID), "volumes", "config", "nats.conf")
	type loaded struct {
		MaxPayload     int       `json:"max_payload"`
		Start          time.Time `json:"start"`
		ConfigLoadTime time.Time `json:"config_load_time"`
	}
	var before loaded
	getJSON(t, pod.Status.PodIP, "/varz", &before)
	cm.Data["nats.conf"] = probeConf + "max_payload: 65536\n"
	must(t, c.Client.Update(ctx, cm))
	changed := time.Now()
	eventually(t, func() error {
		if data, err := os.ReadFile(mounted); err != nil || !strings.Contains(string(data), "max_payload: 65536") {
			return fmt.Errorf("the mounted nats.conf is not refreshed yet (%v)", err)
		}
		return nil
	})
	if late := time.Since(changed); late < DefaultConfigRefreshDelay {
		t.Errorf("the mounted file changed %s after the ConfigMap, before the refresh delay %s", late, DefaultConfigRefreshDelay)
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		var now loaded
		getJSON(t, pod.Status.PodIP, "/varz", &now)
		if now.MaxPayload == 65536 || !now.ConfigLoadTime.Equal(before.ConfigLoadTime) || !now.Start.Equal(before.Start) {
			t.Fatalf("the server reloaded or restarted by itself (%+v, was %+v): nothing in the pod should signal it", now, before)
		}
	}
	// The file is right: a reload reads it, in the same process.
	must(t, c.Kill(ns.Name, "probe-0", syscall.SIGHUP))
	eventually(t, func() error {
		var v loaded
		getJSON(t, pod.Status.PodIP, "/varz", &v)
		if v.MaxPayload != 65536 || !v.Start.Equal(before.Start) {
			return fmt.Errorf("max_payload %d, started %s; want 65536 in the same process (started %s)", v.MaxPayload, v.Start, before.Start)
		}
		return nil
	})

	// A crash restarts the container, counted.
	must(t, c.Kill(ns.Name, "probe-0", syscall.SIGKILL))
	pod = readyPod(t, c, ns.Name, "probe-0", 1)
	if last := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.Signal != int32(syscall.SIGKILL) {
		t.Errorf("last termination %+v, want SIGKILL", last)
	}

	// Deletion: lame duck first; a connected client keeps the server in
	// lame duck mode for its grace period (10 s), so the pod's grace period
	// (2 s) ends it with SIGKILL.
	conn := holdClient(t, pod.Status.PodIP)
	defer conn.Close()
	oldUID := pod.UID
	must(t, c.Client.Delete(ctx, pod))
	eventually(t, func() error {
		next := &corev1.Pod{}
		err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "probe-0"}, next)
		if err == nil && next.UID == oldUID {
			return fmt.Errorf("the deleted pod is still there")
		}
		return client.IgnoreNotFound(err)
	})
	if log := c.ServerLog(ns.Name, "probe-0"); !strings.Contains(log, "Entering lame duck mode") {
		t.Errorf("the server never entered lame duck mode:\n%s", log)
	}
	if !strings.Contains(c.KubeletLog(), "lifecycle/probe-0: grace period over, SIGKILL") {
		t.Errorf("the server was not killed at the end of its grace period:\n%s", c.KubeletLog())
	}
	// The replacement: a new pod, same claim, data kept.
	pod = readyPod(t, c, ns.Name, "probe-0", 0)
	if pod.UID == oldUID {
		t.Fatalf("replacement %s, want a new pod", pod.UID)
	}
	if data, err := os.ReadFile(marker); err != nil || string(data) != "kept" {
		t.Fatalf("claim data after the replacement: %q, %v", data, err)
	}

	// The StatefulSet goes, the claim stays (Retain) until deleted itself.
	deleteStatefulSet(t, c, ns.Name, "probe")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the claim's directory went before the claim: %v", err)
	}
	must(t, c.Client.Delete(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "data-probe-0"}}))
	eventually(t, func() error {
		if _, err := os.Stat(claimDirs[0]); !os.IsNotExist(err) {
			return fmt.Errorf("claim directory still there (%v)", err)
		}
		return nil
	})
}

func probeStatefulSet(ns string) *appsv1.StatefulSet {
	labels := map[string]string{"app": "probe"}
	httpProbe := func(path string) *corev1.Probe {
		return &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 30, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("monitor")}}}
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			ServiceName: "probe",
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](2),
					Containers: []corev1.Container{{
						Name:    "nats",
						Image:   "nats:2.15.3-alpine",
						Command: []string{"nats-server"},
						Args:    []string{"--config", "/etc/nats-config/nats.conf"},
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "SERVER_NAME", Value: `"$(POD_NAME)"`},
						},
						Ports: []corev1.ContainerPort{{Name: "monitor", ContainerPort: 8222}},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "config", MountPath: "/etc/nats-config"},
							{Name: "pid", MountPath: "/var/run/nats"},
							{Name: "data", MountPath: "/data"},
						},
						StartupProbe:   httpProbe("/healthz"),
						ReadinessProbe: httpProbe("/healthz?js-server-only=true"),
						Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
							Command: []string{"nats-server", "--signal", "ldm=/var/run/nats/nats.pid"}}}},
					}, {
						// A second container is only reported running.
						Name:  "sidecar",
						Image: "example.com/sidecar:1",
					}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "probe-config"}}}},
						{Name: "pid", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

// readyPod waits for the pod to be Ready with the given restart count.
func readyPod(t *testing.T, c *Cluster, ns, name string, restarts int32) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	eventually(t, func() error {
		if err := c.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil || !PodReady(pod) || len(pod.Status.ContainerStatuses) == 0 {
			return fmt.Errorf("pod %s not ready: %+v", name, pod.Status.Conditions)
		}
		if got := pod.Status.ContainerStatuses[0].RestartCount; got != restarts {
			return fmt.Errorf("restart count %d, want %d", got, restarts)
		}
		return nil
	})
	return pod
}

// holdClient connects a client that stays until closed.
func holdClient(t *testing.T, ip string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("nats://"+ip+":4222", nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

func getJSON(t *testing.T, ip, path string, out any) {
	t.Helper()
	resp, err := http.Get("http://" + ip + ":8222" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	must(t, json.NewDecoder(resp.Body).Decode(out))
}

// eventually polls check for up to a minute, generous for a busy machine.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %v\nkubelet log:\n%s", err, tail(filepath.Join(sharedCluster(t).Dir, "logs", "kubelet.log"), 30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deleteStatefulSet deletes ns/name in the foreground and waits until no
// pod is left in ns.
func deleteStatefulSet(t *testing.T, c *Cluster, ns, name string) {
	t.Helper()
	ctx := context.Background()
	must(t, c.Client.Delete(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.PropagationPolicy(metav1.DeletePropagationForeground)))
	eventually(t, func() error {
		var pods corev1.PodList
		must(t, c.Client.List(ctx, &pods, client.InNamespace(ns)))
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
