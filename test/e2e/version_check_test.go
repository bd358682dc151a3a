package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// heldFor is how long a refused version change is watched for a server
// that restarts anyway.
const heldFor = 5 * time.Second

// TestVersionChangeIsCheckedBeforeAnythingRestarts: a cluster on 2.15.3
// holds a stream with fast batch publishing, which needs JetStream API
// level 4 (the real servers record it in the stream's metadata). Moving
// to 2.12 (level 2) is refused: the NatsCluster says VersionChangeRefused
// and names the stream, the StatefulSet keeps 2.15.3, and no server
// restarts over a window. Moving to 2.16.0, a line this operator does not
// know, is refused too, until the user allows exactly that version by the
// annotation: then it rolls (the image stays 2.15.3's, which the loopback
// kubelet runs, so the servers come back), and the stream is still there.
//
// Careless operators it catches: one that checks nothing (run as a
// temporary change of versionChangeRefusal returning nil: the StatefulSet
// took 2.12.4 at once and the first server was replaced), one that reads
// the stream's configuration but not its recorded level (the refusal
// never came), and one that ignores the override (2.16.0 never rolled).
// The stepping-stone rule (2.15 needs 2.14.7 or later) and the refused
// schedules-with-discard-new configuration need servers this suite does
// not run (older than 2.14.7; 2.12, which accepted that configuration):
// they are table-tested in internal/plan, their inputs decoded from
// nats-server's own JSON in internal/natsmon.
func TestVersionChangeIsCheckedBeforeAnythingRestarts(t *testing.T) {
	e2ekit.Parallel(t, 60*time.Second)
	f := formCluster(t)
	js := appJetStream(t, appConn(t, f, "version-check", f.Pods...))
	eventually(t, wait, func() error {
		_, err := js.CreateStream(testCtx(t), natsjs.StreamConfig{Name: "FAST", Subjects: []string{"fast.>"}, Replicas: 3, AllowBatchPublish: true})
		return err
	})
	h := recordPods(t, f.NS)
	h.seen(t, f.Pods)

	setVersion(t, f, "2.12.4", "", nil)
	refused := waitRefused(t, f, "stream FAST")
	if !strings.Contains(refused, "(level 4)") {
		t.Errorf("the refusal does not give the stream's level: %s", refused)
	}
	t.Logf("2.12.4 refused: %s", refused)
	holdVersion(t, f, h, "2.15.3")

	// 2.16.0 in name, 2.15.3 in fact: the loopback kubelet runs the
	// image's tag.
	const image = "nats:2.15.3-alpine"
	setVersion(t, f, "2.16.0", image, nil)
	refused = waitRefused(t, f, "does not know nats-server 2.16")
	t.Logf("2.16.0 refused: %s", refused)
	holdVersion(t, f, h, "2.15.3")

	setVersion(t, f, "2.16.0", image, map[string]string{plan.AnnotationAllowVersionChange: "2.16.0"})
	c := f.Cluster
	eventually(t, upgradeTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != "True" || ready.ObservedGeneration != c.Generation {
			return fmt.Errorf("Ready %+v", ready)
		}
		for _, p := range f.Pods {
			if n := len(h.uids(p)); n != 2 {
				return fmt.Errorf("%s has had %d pods, want one replacement", p, n)
			}
		}
		return nil
	})
	// Every server restarted: a new connection, to the new pods.
	js = appJetStream(t, appConn(t, f, "version-check-after", f.Pods...))
	eventually(t, wait, func() error {
		_, err := js.Stream(testCtx(t), "FAST")
		return err
	})
	expectWarningEvent(t, f.NS, "VersionChangeAllowed")
}

// setVersion sets f's spec.version and spec.image, and adds annotations.
func setVersion(t *testing.T, f *formed, version, image string, annotations map[string]string) {
	t.Helper()
	c := f.Cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Spec.Version, c.Spec.Image = version, image
		for k, v := range annotations {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[k] = v
		}
		return cluster.Client.Update(testCtx(t), c)
	})
}

// waitRefused waits for f's Ready condition to say VersionChangeRefused
// for its current generation with a message holding want, and returns
// the message.
func waitRefused(t *testing.T, f *formed, want string) string {
	t.Helper()
	c := f.Cluster
	var msg string
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Reason != v1alpha1.ReasonVersionChangeRefused || ready.ObservedGeneration != c.Generation || !strings.Contains(ready.Message, want) {
			return fmt.Errorf("Ready %+v, want %s saying %q", ready, v1alpha1.ReasonVersionChangeRefused, want)
		}
		msg = ready.Message
		return nil
	})
	return msg
}

// holdVersion checks over heldFor that f's StatefulSet still rolls
// version and that no server was replaced.
func holdVersion(t *testing.T, f *formed, h *podHistory, version string) {
	t.Helper()
	for end := time.Now().Add(heldFor); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		var sts appsv1.StatefulSet
		if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: f.NS, Name: f.Cluster.StatefulSetName()}, &sts); err != nil {
			t.Fatal(err)
		}
		if got := sts.Spec.Template.Labels[render.LabelVersion]; got != version {
			t.Fatalf("the StatefulSet's template went to %s while the change was refused", got)
		}
		for _, p := range f.Pods {
			if n := len(h.uids(p)); n != 1 {
				t.Fatalf("%s was replaced while the change was refused", p)
			}
		}
	}
}
