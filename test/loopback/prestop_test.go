package loopback

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPreStopHookRunsAsWritten deletes pods whose preStop hook is right,
// names a path the image does not have, names the wrong pid file, or runs
// past the grace period. Only the right one puts the server in lame duck
// mode; the wrong ones fail as a real kubelet reports it (a
// FailedPreStopHook event naming the error) and the server gets SIGTERM
// (no lame duck); the endless one is cut off by the grace period. A
// kubelet that maps the hook to its signal instead of running it passes
// only the first.
func TestPreStopHookRunsAsWritten(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns, _ := probeNamespace(t, c, "prestop")
	for _, tc := range []struct {
		name      string
		hook      []string
		lameDuck  bool
		failedMsg string // in the FailedPreStopHook event; "" for none
		kubelet   string // in the kubelet's log
	}{
		{name: "right", hook: []string{"nats-server", "--signal", "ldm=/var/run/nats/nats.pid"}, lameDuck: true,
			kubelet: "preStop hook completed"},
		{name: "wrong-path", hook: []string{"/opt/nats/bin/nats-server", "--signal", "ldm=/var/run/nats/nats.pid"},
			failedMsg: "no such file or directory", kubelet: "FailedPreStopHook"},
		{name: "wrong-pid-file", hook: []string{"nats-server", "--signal", "ldm=/var/run/nats/other.pid"},
			failedMsg: "exited with 1", kubelet: "FailedPreStopHook"},
		{name: "endless", hook: []string{"nats-server", "-a", "127.0.0.1", "-p", "-1"},
			kubelet: "did not complete within the termination grace period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a pod of its own, its log lines, events and server log by its name
			pod := preStopPod(ns.Name, "hook-"+tc.name, tc.hook)
			must(t, c.Client.Create(ctx, pod))
			pod = readyPod(t, c, ns.Name, pod.Name, 0)
			deleted := time.Now()
			must(t, c.Client.Delete(ctx, pod))
			eventually(t, func() error {
				err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: pod.Name}, &corev1.Pod{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("pod still there (%v)", err)
			})
			gone := time.Since(deleted)
			log := c.ServerLog(ns.Name, pod.Name)
			if got := strings.Contains(log, "Entering lame duck mode"); got != tc.lameDuck {
				t.Errorf("lame duck entered: %v, want %v; server log:\n%s", got, tc.lameDuck, log)
			}
			if want := ns.Name + "/" + pod.Name + ": "; !strings.Contains(kubeletLines(c, want), tc.kubelet) {
				t.Errorf("the kubelet's log has no %q for %s:\n%s", tc.kubelet, pod.Name, kubeletLines(c, want))
			}
			events := hookEvents(t, c, pod)
			switch {
			case tc.failedMsg == "" && len(events) > 0:
				t.Errorf("FailedPreStopHook events %q for a hook that did not fail", events)
			case tc.failedMsg != "" && (len(events) != 1 || !strings.Contains(events[0], tc.failedMsg)):
				t.Errorf("FailedPreStopHook events %q, want one that says %q", events, tc.failedMsg)
			}
			// The grace period (2 s) bounds the hook, the minimum after it
			// (2 s) the server: an unbounded hook would keep the pod.
			if tc.name == "endless" && gone > 30*time.Second {
				t.Errorf("the pod took %s to go with an endless hook", gone)
			}
			t.Logf("%s: gone %s after the delete call; events %q", tc.name, gone.Round(time.Millisecond), events)
		})
	}
}

// preStopPod is a bare pod running probeConf with the given preStop
// hook, a client-free server (lame duck then ends at its own pace or the
// grace period's), grace period 2 s.
func preStopPod(ns, name string, hook []string) *corev1.Pod {
	tmpl := probeStatefulSet(ns).Spec.Template
	spec := tmpl.Spec
	spec.TerminationGracePeriodSeconds = ptr.To[int64](2)
	spec.Containers[0].Lifecycle.PreStop.Exec.Command = hook
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"hook": name}}, Spec: spec}
}

// hookEvents are the messages of the FailedPreStopHook events about pod.
func hookEvents(t *testing.T, c *Cluster, pod *corev1.Pod) []string {
	t.Helper()
	var msgs []string
	// The event is written on a goroutine of its own: a moment after the
	// pod's deletion at most.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var list corev1.EventList
		must(t, c.Client.List(context.Background(), &list, client.InNamespace(pod.Namespace)))
		msgs = nil
		for _, e := range list.Items {
			if e.InvolvedObject.UID == pod.UID && e.Reason == "FailedPreStopHook" {
				msgs = append(msgs, e.Message)
			}
		}
		if len(msgs) > 0 || time.Now().After(deadline) {
			return msgs
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kubeletLines are the kubelet log's lines that contain prefix.
func kubeletLines(c *Cluster, prefix string) string {
	var out []string
	for _, l := range strings.Split(c.KubeletLog(), "\n") {
		if strings.Contains(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
