package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ConfigKey is nats.conf's key in the ConfigMap.
const ConfigKey = "nats.conf"

// ConfigMap holds nats.conf. It carries no secret: credentials are $VARs.
func ConfigMap(c *v1alpha1.NatsCluster, conf RenderedConf) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta("v1", "ConfigMap"),
		ObjectMeta: objectMeta(c, c.ConfigMapName()),
		Data:       map[string]string{ConfigKey: conf.Text},
	}
}
