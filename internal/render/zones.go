package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// A server learns its zone and region from its pod's labels, which
// Kubernetes (1.35+, PodTopologyLabelsAdmission) copies from the node's
// when it binds the pod, and carries them as JetStream server tags.
const (
	EnvZone      = "KUBENATS_ZONE"
	EnvRegion    = "KUBENATS_REGION"
	EnvZoneTag   = "KUBENATS_ZONE_TAG"
	EnvRegionTag = "KUBENATS_REGION_TAG"
)

// RegionTagPrefix starts the server tag that names a server's region.
const RegionTagPrefix = "region:"

// zoneEnv reads the pod's zone and region labels and spells the tags.
// nats-server lexes an environment value as config: quoted, each tag is a
// string whatever the label says (a label value holds no quote). A node
// without the label gives the tag with an empty value ("zone:"), one
// zone like any other.
func zoneEnv(c *v1alpha1.NatsCluster) []corev1.EnvVar {
	if !c.Spec.CarriesZoneTags() {
		return nil
	}
	label := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			APIVersion: "v1", FieldPath: "metadata.labels['" + key + "']",
		}}}
	}
	return []corev1.EnvVar{
		label(EnvZone, v1alpha1.LabelZone),
		label(EnvRegion, v1alpha1.LabelRegion),
		{Name: EnvZoneTag, Value: `"` + v1alpha1.ZoneTagPrefix + `$(` + EnvZone + `)"`},
		{Name: EnvRegionTag, Value: `"` + RegionTagPrefix + `$(` + EnvRegion + `)"`},
	}
}

// serverTags are the tags nats.conf gives each server, read from zoneEnv.
func serverTags(c *v1alpha1.NatsCluster) []natsconf.Value {
	if !c.Spec.CarriesZoneTags() {
		return nil
	}
	return []natsconf.Value{natsconf.Env(EnvZoneTag), natsconf.Env(EnvRegionTag)}
}
