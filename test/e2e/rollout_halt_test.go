package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// haltWindow is how long a halted rollout is watched for a server it
// should not touch: several of the operator's one-second retries.
const haltWindow = 10 * time.Second

// TestBadVersionRevertedRecovers: a version that passes validation and
// the version check (a patch of the line the servers run) but has no
// image (the loopback kubelet has no nats-server for it, and
// reports ErrImagePull, then ImagePullBackOff, as a kubelet does for a
// missing tag). The first replaced server never becomes ready: the
// rollout halts, Ready names that server and the pull error, and no other
// server is touched over a window. Reverting the version replaces the
// broken server at once (outdated and not ready, it serves nothing), and
// the cluster is Ready on the old version with nothing else replaced.
func TestBadVersionRevertedRecovers(t *testing.T) {
	haltAndRevert(t, func(s *v1alpha1.NatsClusterSpec) { s.Version = "2.15.99" },
		func(s *v1alpha1.NatsClusterSpec) { s.Version = v1alpha1.DefaultVersion },
		"ErrImagePull", "ImagePullBackOff")
}

// TestUnschedulablePodRevertedRecovers: the same for a pod that cannot be
// scheduled: a node selector on a label the node lacks leaves the first
// replaced pod Pending (PodScheduled=False, Unschedulable); the rollout
// halts naming it, and reverting the selector recovers.
func TestUnschedulablePodRevertedRecovers(t *testing.T) {
	haltAndRevert(t, func(s *v1alpha1.NatsClusterSpec) {
		s.PodTemplate.NodeSelector = map[string]string{"kubenats.io/e2e-absent-label": "true"}
	}, func(s *v1alpha1.NatsClusterSpec) { s.PodTemplate.NodeSelector = nil }, "Unschedulable")
}

// TestCrashingServerHaltsTheRollout: a change that passes validation and
// makes every server it reaches exit at start (max_payload above
// max_pending, which nats-server refuses only when it starts, after its
// parser took the file): the first replaced server keeps crashing and the
// kubelet backs off its restarts (CrashLoopBackOff). The rollout halts
// naming that server and the back-off, replaces no other server over a
// window, and reverting the change recovers. The careless variant it
// catches: an operator that takes a crash-looping server for one that is
// only slow to become ready (its pod is Running, not Pending, and its
// container runs for a moment between back-offs): the rollout then waits
// without saying it halted, or why, for podTrouble's five minutes.
// (Between back-offs the container's state is Running: podTrouble reads
// its failed last run, so that the halt holds through the restarts.)
func TestCrashingServerHaltsTheRollout(t *testing.T) {
	haltAndRevert(t, func(s *v1alpha1.NatsClusterSpec) {
		s.Config = map[string]apiextensionsv1.JSON{"max_payload": {Raw: []byte("2097152")}, "max_pending": {Raw: []byte("1048576")}}
	}, func(s *v1alpha1.NatsClusterSpec) { s.Config = nil }, "CrashLoopBackOff")
}

// haltAndRevert forms a cluster, makes the bad change, checks the halt
// (the Ready condition names the broken server and one of troubles), and
// the revert.
func haltAndRevert(t *testing.T, bad, revert func(*v1alpha1.NatsClusterSpec), troubles ...string) {
	f := formCluster(t)
	c := f.Cluster
	h := recordPods(t, f.NS)
	h.seen(t, f.Pods)
	edit(t, c, bad)

	// The halt: one server replaced, broken; Ready says which and why.
	var broken string
	eventually(t, upgradeTimeout, func() error {
		var replaced []string
		for _, p := range f.Pods {
			if len(h.uids(p)) > 1 {
				replaced = append(replaced, p)
			}
		}
		if len(replaced) != 1 {
			return fmt.Errorf("servers replaced so far: %v", replaced)
		}
		broken = replaced[0]
		return halted(t, c, broken, troubles)
	})
	t.Logf("halted on %s: %s", broken, meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady).Message)
	// A crash-looping container is started again whenever its back-off
	// ends, and shows no waiting reason while it runs: the pod is read
	// until it shows its trouble, as a user's kubectl would soon show it.
	eventually(t, brokenPodTimeout, func() error {
		pod := &corev1.Pod{}
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: f.NS, Name: broken}, pod); err != nil {
			return err
		}
		return brokenPodShows(pod, troubles)
	})

	// Over a window: still halted, and nothing else touched.
	others := slices.DeleteFunc(slices.Clone(f.Pods), func(p string) bool { return p == broken })
	for end := time.Now().Add(haltWindow); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if err := halted(t, c, broken, troubles); err != nil {
			t.Fatalf("during the halt: %v", err)
		}
		if touched := h.touched(others...); len(touched) > 0 {
			t.Fatalf("a halted rollout touched %v", touched)
		}
	}
	if n := len(h.uids(broken)); n != 2 {
		t.Fatalf("the broken server %s was replaced %d times during the halt, want once", broken, n-1)
	}

	// The revert: the broken server goes at once, and the cluster is Ready
	// on the old version.
	reverted := time.Now()
	edit(t, c, revert)
	var goneIn time.Duration
	eventually(t, wait, func() error {
		for _, d := range h.deletions() {
			if d.name == broken && d.at.After(reverted) && goneIn == 0 {
				goneIn = d.at.Sub(reverted)
			}
		}
		if n := len(h.uids(broken)); n != 3 {
			return fmt.Errorf("%d pods of %s seen, want a third once reverted", n, broken)
		}
		return nil
	})
	replacedIn := time.Since(reverted)
	readyWith(t, c, 3)
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if c.Status.ServerVersion != v1alpha1.DefaultVersion || c.Status.ServerVersionSource != v1alpha1.VersionObserved {
			return fmt.Errorf("serverVersion %s (%s)", c.Status.ServerVersion, c.Status.ServerVersionSource)
		}
		for _, p := range f.Pods {
			var v varz
			if err := monitor(f.IP(p), "/varz", &v); err != nil || v.Version != v1alpha1.DefaultVersion {
				return fmt.Errorf("%s runs %q (%v)", p, v.Version, err)
			}
		}
		return nil
	})
	checkMetaGroup(t, f)
	if touched := h.touched(others...); len(touched) > 0 {
		t.Fatalf("the revert touched %v besides the broken server", touched)
	}
	t.Logf("reverted: broken server %s deleted %s after the revert, its replacement created after %s; %v untouched throughout",
		broken, goneIn.Round(time.Millisecond), replacedIn.Round(time.Millisecond), others)
}

// edit changes c's spec, retrying on conflicts.
func edit(t *testing.T, c *v1alpha1.NatsCluster, change func(*v1alpha1.NatsClusterSpec)) {
	t.Helper()
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		change(&c.Spec)
		return cluster.Client.Update(testCtx(t), c)
	})
}

// halted: Ready is False with reason RolloutHalted, naming server and one
// of troubles.
func halted(t *testing.T, c *v1alpha1.NatsCluster, server string, troubles []string) error {
	if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
		return err
	}
	ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != "False" || ready.Reason != v1alpha1.ReasonRolloutHalted ||
		!strings.Contains(ready.Message, "server "+server+" ") || !slices.ContainsFunc(troubles, func(s string) bool { return strings.Contains(ready.Message, s) }) {
		return fmt.Errorf("Ready %+v, want RolloutHalted naming server %s and one of %v", ready, server, troubles)
	}
	return nil
}

// brokenPodTimeout bounds the wait for a crash-looping pod to be seen in
// its back-off: the loopback kubelet's longest back-off is well under it.
const brokenPodTimeout = time.Minute

// brokenPodShows: the pod shows what a real cluster would show.
func brokenPodShows(pod *corev1.Pod, troubles []string) error {
	var shown []string
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			shown = append(shown, c.Reason)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == "nats" && cs.State.Waiting != nil {
			shown = append(shown, cs.State.Waiting.Reason)
		}
	}
	// A pod whose container ran is Running while the kubelet backs off
	// its restarts; one that never ran is Pending.
	phase := corev1.PodPending
	if slices.Contains(shown, "CrashLoopBackOff") {
		phase = corev1.PodRunning
	}
	if !slices.ContainsFunc(shown, func(s string) bool { return slices.Contains(troubles, s) }) || pod.Status.Phase != phase {
		return fmt.Errorf("broken pod %s: phase %s, reasons %v; want %s with one of %v", pod.Name, pod.Status.Phase, shown, phase, troubles)
	}
	return nil
}
