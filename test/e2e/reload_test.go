package e2e_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/loopback"
)

// rolloutTimeout bounds replacing every server one after the other, each
// waiting out its lame duck and the cluster settling.
const rolloutTimeout = 6 * time.Minute

// TestReloadableSettingReloadsInPlace: a change nats-server applies on
// reload (max_payload) reaches every server without restarting any: the
// same pods, the same processes, the pod template untouched, and the new
// value in force on every server. The loopback kubelet refreshes each
// pod's files a few seconds late, so the operator's first reload rereads
// the old file and it must try again; ConfigLoaded turns True only once
// every server runs the new value.
func TestReloadableSettingReloadsInPlace(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "reload")
	before := snapshot(t, f)
	const payload = 2 << 20 // the default is 1 MiB
	if before.varz[f.Pods[0]].MaxPayload == payload {
		t.Fatalf("max_payload is already %d: the change would prove nothing", payload)
	}

	changed := time.Now()
	setConfig(t, f.Cluster, "max_payload", payload)
	inForce := func(v varzRuntime) error {
		if v.MaxPayload != payload {
			return fmt.Errorf("max_payload %d, want %d", v.MaxPayload, payload)
		}
		return nil
	}
	loaded := waitConfigLoaded(t, f, changed, wait, func() error { return onEveryServer(f, inForce) })
	t.Logf("ConfigLoaded True, max_payload %d in force on every server %.2fs after the spec change (%s)",
		payload, time.Since(changed).Seconds(), loaded.Message)
	waitClusterReady(t, f.Cluster, wait)

	after := snapshot(t, f)
	if after.configHash != before.configHash || after.updateRevision != before.updateRevision {
		t.Errorf("pod template changed (config hash %s -> %s, revision %s -> %s): a reloadable setting must not restart the servers",
			before.configHash, after.configHash, before.updateRevision, after.updateRevision)
	}
	for _, pod := range f.Pods {
		b, a := before.pods[pod], after.pods[pod]
		bs, as := natsStatus(b), natsStatus(a)
		switch {
		case a.UID != b.UID:
			t.Errorf("%s was replaced", pod)
		case as.RestartCount != 0 || as.State.Running == nil || !as.State.Running.StartedAt.Equal(&bs.State.Running.StartedAt):
			t.Errorf("%s: nats container restarted or not running (restartCount %d, state %+v, was started at %s)", pod, as.RestartCount, as.State, bs.State.Running.StartedAt)
		case !after.varz[pod].Start.Equal(before.varz[pod].Start):
			t.Errorf("%s: /varz start %s, was %s: a new process", pod, after.varz[pod].Start, before.varz[pod].Start)
		case !after.varz[pod].ConfigLoadTime.After(before.varz[pod].ConfigLoadTime):
			t.Errorf("%s: /varz config_load_time %s, was %s: no reload", pod, after.varz[pod].ConfigLoadTime, before.varz[pod].ConfigLoadTime)
		}
	}
}

// TestRestartSettingReplacesPods: a change a reload cannot apply
// (max_pending, left out of natsconf.Reloadable) changes the pod template's
// config hash and every server is replaced, after which the cluster is
// Ready and the new value is in force everywhere. It holds whether the
// StatefulSet rolls the pods or the operator does.
func TestRestartSettingReplacesPods(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "restart")
	before := snapshot(t, f)
	const pending = 32 << 20 // the default is 64 MiB
	if before.varz[f.Pods[0]].MaxPending == pending {
		t.Fatalf("max_pending is already %d: the change would prove nothing", pending)
	}

	changed := time.Now()
	setConfig(t, f.Cluster, "max_pending", pending)
	eventually(t, wait, func() error {
		sts, err := statefulSet(t, f)
		if err != nil {
			return err
		}
		if h := sts.Spec.Template.Annotations[render.AnnotationConfigHash]; h == "" || h == before.configHash {
			return fmt.Errorf("pod template config hash %q, was %q", h, before.configHash)
		}
		return nil
	})
	eventually(t, rolloutTimeout, func() error {
		for _, pod := range f.Pods {
			p := &corev1.Pod{}
			if err := cluster.Client.Get(testCtx(t), types.NamespacedName{Namespace: ns, Name: pod}, p); err != nil {
				return err
			}
			if p.UID == before.pods[pod].UID {
				return fmt.Errorf("%s not replaced yet", pod)
			}
			if !loopback.PodReady(p) {
				return fmt.Errorf("%s replaced, not Ready yet", pod)
			}
		}
		return nil
	})
	t.Logf("every server replaced and Ready %.2fs after the spec change", time.Since(changed).Seconds())
	waitClusterReady(t, f.Cluster, rolloutTimeout)
	eventually(t, wait, func() error {
		return onEveryServer(f, func(v varzRuntime) error {
			if v.MaxPending != pending {
				return fmt.Errorf("max_pending %d, want %d", v.MaxPending, pending)
			}
			return nil
		})
	})
	t.Logf("cluster Ready, max_pending %d in force on every server %.2fs after the spec change", pending, time.Since(changed).Seconds())
}

// clusterSnapshot is what tells a reload from a restart.
type clusterSnapshot struct {
	pods           map[string]*corev1.Pod
	varz           map[string]varzRuntime
	configHash     string // of the StatefulSet's pod template
	updateRevision string
}

// snapshot reads f's pods, their /varz and the StatefulSet.
func snapshot(t *testing.T, f *formed) *clusterSnapshot {
	t.Helper()
	s := &clusterSnapshot{pods: serverPods(t, f), varz: map[string]varzRuntime{}}
	for _, pod := range f.Pods {
		v, err := runtimeOf(f.IP(pod))
		if err != nil {
			t.Fatal(err)
		}
		s.varz[pod] = v
	}
	sts, err := statefulSet(t, f)
	if err != nil {
		t.Fatal(err)
	}
	s.configHash = sts.Spec.Template.Annotations[render.AnnotationConfigHash]
	s.updateRevision = sts.Status.UpdateRevision
	return s
}

// statefulSet reads f's StatefulSet.
func statefulSet(t *testing.T, f *formed) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{}
	err := cluster.Client.Get(testCtx(t), types.NamespacedName{Namespace: f.NS, Name: f.Cluster.Name}, sts)
	return sts, err
}

// setConfig sets one spec.config key of c to a number, as a user's
// `kubectl patch --type merge` would.
func setConfig(t *testing.T, c *v1alpha1.NatsCluster, key string, value int64) {
	t.Helper()
	patch := client.MergeFrom(c.DeepCopy())
	if c.Spec.Config == nil {
		c.Spec.Config = map[string]apiextensionsv1.JSON{}
	}
	c.Spec.Config[key] = apiextensionsv1.JSON{Raw: []byte(strconv.FormatInt(value, 10))}
	if err := cluster.Client.Patch(testCtx(t), c, patch); err != nil {
		t.Fatal(err)
	}
}

// onEveryServer runs check on each server's /varz.
func onEveryServer(f *formed, check func(varzRuntime) error) error {
	for _, pod := range f.Pods {
		v, err := runtimeOf(f.IP(pod))
		if err != nil {
			return err
		}
		if err := check(v); err != nil {
			return fmt.Errorf("%s: %w", pod, err)
		}
	}
	return nil
}
