package render

import "github.com/kubenats/kubenats/api/v1alpha1"

// ServerImage is the nats image of c: spec.image, or the official image at
// spec.version.
func ServerImage(c *v1alpha1.NatsCluster) string {
	if c.Spec.Image != "" {
		return c.Spec.Image
	}
	return "nats:" + c.Spec.Version + "-alpine"
}
