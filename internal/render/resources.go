package render

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults for containers whose resources the user did not set. Memory
// requests equal limits: nats-server under memory pressure during stream
// recovery is better not scheduled than OOM-killed.
var (
	defaultServerResources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("250m"),
			corev1.ResourceMemory: resource.MustParse("512Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("512Mi"),
		},
	}
)

// goMemLimit is about 80% of the memory limit, in bytes: the Go runtime then
// collects harder before the kernel kills the server. Empty without a limit,
// and for a limit outside the bounds Objects enforces (never "0", which
// would make the server collect without pause).
func goMemLimit(r corev1.ResourceRequirements) string {
	limit, ok := r.Limits[corev1.ResourceMemory]
	if !ok || limit.Cmp(MinMemoryLimit) < 0 || limit.Cmp(MaxMemoryLimit) > 0 {
		return ""
	}
	return strconv.FormatInt(limit.Value()/5*4, 10)
}
