package render

import (
	"strconv"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Child names derive from the NatsCluster's name, so that several clusters
// live side by side in one namespace.

// DataVolumeName is the volume claim template's name (but see DataVolume);
// claims are data-<name>-<ordinal>.
const DataVolumeName = "data"

// ClaimName is the claim of the server with the given ordinal.
func ClaimName(c *v1alpha1.NatsCluster, ordinal int) string {
	return DataVolume(c) + "-" + PodName(c, ordinal)
}

// PodName is the pod of the server with the given ordinal.
func PodName(c *v1alpha1.NatsCluster, ordinal int) string {
	return c.StatefulSetName() + "-" + itoa(ordinal)
}

// PodOrdinal is the ordinal of one of the cluster's pods (or servers, which
// are named after them) by its name.
func PodOrdinal(c *v1alpha1.NatsCluster, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, c.StatefulSetName()+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || itoa(n) != rest {
		return 0, false
	}
	return n, true
}
