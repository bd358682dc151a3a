package render

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Objects are every object that runs c, except the Secrets with generated
// values (see Secrets), in the order they should be applied: what the pods
// mount exists before the pods.
func Objects(c *v1alpha1.NatsCluster, in Inputs) ([]client.Object, error) {
	c = c.WithDefaults()
	if err := checkQuantities(c); err != nil {
		return nil, err
	}
	conf, err := renderConf(c, in)
	if err != nil {
		return nil, err
	}
	in.ConfigHash = conf.RestartHash
	objs := []client.Object{ServiceAccount(c), ConfigMap(c, conf)}
	// The policy before the pods: a pod that gets its sidecar finds its
	// mode in place.
	if stage := meshStage(c, in); stage.Policy != "" {
		objs = append(objs, PeerAuthentication(c, stage))
	}
	objs = append(objs, Certificates(c, in.ClusterDomain)...)
	objs = append(objs,
		HeadlessService(c),
		ClientService(c),
		StatefulSet(c, in),
		PodDisruptionBudget(c),
	)
	if ing := WebSocketIngress(c); ing != nil {
		objs = append(objs, ing)
	}
	objs, err = withNetworkPolicy(c, append(objs, monitoringObjects(c, in)...))
	if err != nil {
		return nil, err
	}
	return withMonitoringPortsPolicy(c, in, objs)
}
