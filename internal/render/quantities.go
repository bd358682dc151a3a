package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Bounds of the sizes a NatsCluster may state. resource.Quantity.Value()
// does not fail beyond int64: 1E19 comes back as 0, which nats.conf would
// read as "no limit" for a store and the Go runtime as GOMEMLIMIT=0, and
// 2^63 as a negative number. The CRD refuses these at admission with the
// same bounds (api/v1alpha1, TestQuantityBoundsMatchTheCRD); this is the
// operator's own check, for objects that got past admission.
var (
	MaxFileStore   = resource.MustParse("1Pi")
	MaxMemoryStore = resource.MustParse("16Ti")
	// MinMemoryLimit is the least memory limit nats-server can run in; it
	// also keeps GOMEMLIMIT (80% of it) well above zero.
	MinMemoryLimit = resource.MustParse("64Mi")
	MaxMemoryLimit = resource.MustParse("16Ti")
)

// checkQuantities refuses sizes outside the bounds, naming the field.
func checkQuantities(c *v1alpha1.NatsCluster) error {
	js := c.Spec.JetStream
	if s := js.FileStore.Size; s != nil {
		if err := inRange("spec.jetstream.fileStore.size", *s, resource.MustParse("1"), MaxFileStore); err != nil {
			return err
		}
	}
	if m := js.MemoryStore; m != nil {
		if err := inRange("spec.jetstream.memoryStore.size", m.Size, resource.MustParse("1"), MaxMemoryStore); err != nil {
			return err
		}
	}
	if r := c.Spec.Resources; r != nil {
		if l, ok := r.Limits[corev1.ResourceMemory]; ok {
			if err := inRange("spec.resources.limits.memory", l, MinMemoryLimit, MaxMemoryLimit); err != nil {
				return err
			}
		}
	}
	return nil
}

func inRange(field string, q, lo, hi resource.Quantity) error {
	if q.Cmp(lo) < 0 || q.Cmp(hi) > 0 {
		return fmt.Errorf("%s must be between %s and %s", field, lo.String(), hi.String())
	}
	return nil
}
