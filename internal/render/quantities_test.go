package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func memoryLimit(q string) func(*v1alpha1.NatsCluster) {
	return withResources(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)},
	})
}

// TestObjectsRefusesSizesOutOfBounds: sizes that resource.Quantity.Value()
// turns into 0 (read as "unlimited" by nats.conf and as GOMEMLIMIT=0 by the
// Go runtime) or into a negative number, and sizes too small to run in, are
// errors naming the field, should they get past admission.
func TestObjectsRefusesSizesOutOfBounds(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		edit        func(*v1alpha1.NatsCluster)
	}{
		{"fileStore 1E19", "fileStore.size", withFileStoreSize("1E19")},
		{"fileStore 2^63", "fileStore.size", withFileStoreSize("9223372036854775808")},
		{"fileStore 1e30", "fileStore.size", withFileStoreSize("1e30")},
		{"fileStore past 1Pi", "fileStore.size", withFileStoreSize("2Pi")},
		{"memoryStore 1E19", "memoryStore.size", withMemoryStore("1E19")},
		{"memoryStore zero", "memoryStore.size", withMemoryStore("0")},
		{"memory limit 1E19", "limits.memory", memoryLimit("1E19")},
		{"memory limit of 4 bytes", "limits.memory", memoryLimit("4")},
		{"memory limit of a milli-byte", "limits.memory", memoryLimit("1m")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := objectsNoPanic(t, cluster(tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Objects = %v, want an error naming %s", err, tc.field)
			}
		})
	}
}

func TestObjectsAcceptsSizesAtTheBounds(t *testing.T) {
	for _, edit := range []func(*v1alpha1.NatsCluster){
		withFileStoreSize("1Pi"), withMemoryStore("16Ti"), memoryLimit("64Mi"), memoryLimit("16Ti"),
	} {
		c := cluster(edit)
		if _, err := objectsNoPanic(t, c); err != nil {
			t.Errorf("Objects: %v", err)
		}
	}
	env, ok := envVar(serverContainerOf(t, cluster(memoryLimit("64Mi"))), "GOMEMLIMIT")
	if !ok || env.Value != "53687088" {
		t.Errorf("GOMEMLIMIT at a 64Mi limit = %+v, want 80%% of it", env)
	}
}

// TestQuantityBoundsMatchTheCRD: the CEL rules of the API carry the bounds
// the operator checks, so admission and the operator agree.
func TestQuantityBoundsMatchTheCRD(t *testing.T) {
	files, err := filepath.Glob("../../api/v1alpha1/natscluster*_types.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the API's type files: %v %v", files, err)
	}
	var api []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		api = append(api, data...)
	}
	for _, q := range []resource.Quantity{render.MaxFileStore, render.MaxMemoryStore, render.MinMemoryLimit, render.MaxMemoryLimit} {
		if !strings.Contains(string(api), "quantity('"+q.String()+"')") {
			t.Errorf("no CEL rule of the API names %s", q.String())
		}
	}
}
