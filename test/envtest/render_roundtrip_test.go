package envtest_test

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/render"
)

// TestRenderedFieldsSurviveTheAPIServer proves what `kubenats render`
// prints is what the API server keeps: every field of every rendered object
// is in the live object with the same value. A field the server rewrites
// (the way it rewrites the official chart's claim templates) would make
// GitOps tools show the objects as out of sync forever.
func TestRenderedFieldsSurviveTheAPIServer(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](3)
		s.JetStream.FileStore.StorageClassName = ptr.To("fast")
	})
	objs, err := render.Objects(c, render.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, c)
	for _, obj := range objs {
		want, err := manifest.Unstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(want.GroupVersionKind())
		eventually(t, wait, func() error {
			if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), live); err != nil {
				return err
			}
			// The pod template's hash annotations depend on the Secrets the
			// operator generated, which render cannot know.
			return subset(stripInputs(want.Object), live.Object, want.GetKind())
		})
	}
}

// stripInputs removes what render leaves to the controller's Inputs.
func stripInputs(m map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(m)
	if ann, ok, _ := unstructured.NestedMap(out, "spec", "template", "metadata", "annotations"); ok {
		delete(ann, render.AnnotationConfigHash)
		_ = unstructured.SetNestedMap(out, ann, "spec", "template", "metadata", "annotations")
	}
	return out
}

// subset reports the first value of want that live lacks or holds
// differently. Lists must match element by element.
func subset(want, live any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: live is %T, want a map", path, live)
		}
		for k, v := range w {
			if err := subset(v, l[k], path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return fmt.Errorf("%s: live %v, want %d elements", path, live, len(w))
		}
		for i := range w {
			if err := subset(w[i], l[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if !reflect.DeepEqual(fmt.Sprint(want), fmt.Sprint(live)) {
			return fmt.Errorf("%s: live %v, rendered %v", path, live, want)
		}
	}
	return nil
}
