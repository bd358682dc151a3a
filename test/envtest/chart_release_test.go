package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/convert"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/test/upstream"
)

// TestConvertedChartReleaseLeavesTheReleaseAlone: the official chart's
// rendering of a three-server JetStream release is applied, then the
// NatsCluster `kubenats convert` makes of it, which has the release's
// name and so the names of its StatefulSet, Services and ConfigMap. The
// operator refuses it (NameConflict) and none of the chart's objects
// changes over a window: not its data, not its owners. Until a takeover
// moves a release's servers, the converted cluster can run beside the
// release only under another name, and never takes over by accident.
// It would fail for an apply that forces its way over objects of the same
// name (TestForeignObjectWithTheSameNameIsRefused ran that variant for a
// ConfigMap).
func TestConvertedChartReleaseLeavesTheReleaseAlone(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	docs, chart := applyChartRendering(t, ns, "")
	res, err := convert.Chart(docs, ns)
	if err != nil || len(res.Lost) != 0 {
		t.Fatalf("convert: %v, lost %v", err, res.Lost)
	}
	c := res.Objects[0].(*v1alpha1.NatsCluster)
	create(t, c)
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonNameConflict)
	chartUnchanged(t, chart, 3*time.Second)
}

// TestTakeoverOfAReleaseKubenatsCannotCarryTouchesNothing: a release whose
// nats.conf serves WebSocket (which the converted cluster would not) is
// named in spec.takeover. The takeover is refused (TakeoverRefused) with
// the setting named, and none of the chart's objects changes over a
// window: its StatefulSet is not released, its Services not claimed.
// Catches a takeover that releases the StatefulSet first and checks after
// (the StatefulSet is gone), and one that checks only the StatefulSet's
// labels (the cluster goes on to the rollout).
func TestTakeoverOfAReleaseKubenatsCannotCarryTouchesNothing(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	docs, chart := applyChartRendering(t, ns, `"websocket": {"port": 8080, "no_tls": true},`)
	res, err := convert.Chart(docs, ns)
	if err != nil || len(res.Lost) == 0 {
		t.Fatalf("convert: %v, lost %v; want the websocket block named", err, res.Lost)
	}
	c := res.Objects[0].(*v1alpha1.NatsCluster)
	c.Spec.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: c.Name}
	create(t, c)
	readyCondition(t, c, metav1.ConditionFalse, "TakeoverRefused")
	if _, _, msg := readyMessage(t, c); !strings.Contains(msg, "websocket") {
		t.Errorf("the refusal does not name the setting: %s", msg)
	}
	chartUnchanged(t, chart, 3*time.Second)
}

// applyChartRendering creates the official chart's rendering in ns (the
// project's chart-shaped stand-in, or the real rendering when
// KUBENATS_UPSTREAM_FIXTURES names it: package upstream), with extra
// inserted at the top of its nats.conf, and returns the documents and the
// objects as created.
func applyChartRendering(t *testing.T, ns, extra string) ([][]byte, []*unstructured.Unstructured) {
	t.Helper()
	data := upstream.ChartRendering(t)
	if extra != "" {
		data = []byte(upstream.Edit(t, string(data), "    {\n      \"cluster\"", "    {\n      "+extra+"\n      \"cluster\""))
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		t.Fatal(err)
	}
	var chart []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		create(t, u)
		chart = append(chart, u)
	}
	return docs, chart
}

// chartUnchanged fails when any of the chart's objects changes (its
// resource version or owners) or goes within d.
func chartUnchanged(t *testing.T, chart []*unstructured.Unstructured, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, before := range chart {
			now := &unstructured.Unstructured{}
			now.SetGroupVersionKind(before.GroupVersionKind())
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(before), now); err != nil {
				t.Fatal(err)
			}
			if now.GetResourceVersion() != before.GetResourceVersion() || len(now.GetOwnerReferences()) != 0 {
				t.Fatalf("the chart's %s %s was changed: %s", before.GetKind(), before.GetName(), describeChange(before, now))
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func describeChange(before, now *unstructured.Unstructured) string {
	return fmt.Sprintf("resourceVersion %s -> %s, owners %v", before.GetResourceVersion(), now.GetResourceVersion(), now.GetOwnerReferences())
}
