package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ServerContainerName is the container that runs nats-server.
const ServerContainerName = "nats"

func serverContainer(c *v1alpha1.NatsCluster) corev1.Container {
	resources := defaultServerResources
	if c.Spec.Resources != nil {
		resources = *c.Spec.Resources
	}
	mounts := []corev1.VolumeMount{
		{Name: configVolume, MountPath: ConfigDir, ReadOnly: true},
		{Name: pidVolume, MountPath: PidDir},
	}
	if c.Spec.JetStreamEnabled() {
		mounts = append(mounts, corev1.VolumeMount{Name: c.DataVolume(), MountPath: StoreDir})
	}
	_, tlsMounts := tlsVolumes(c)
	mounts = append(mounts, tlsMounts...)
	return corev1.Container{
		Name:            ServerContainerName,
		Image:           c.ServerImage(),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"nats-server"},
		Args:            []string{"--config", ConfigFile},
		Env:             serverEnv(c, resources),
		Ports: append([]corev1.ContainerPort{
			{Name: "nats", ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
			{Name: "cluster", ContainerPort: ClusterPort, Protocol: corev1.ProtocolTCP},
			{Name: "monitor", ContainerPort: MonitorPort, Protocol: corev1.ProtocolTCP},
		}, append(listenerContainerPorts(c), topologyContainerPorts(c)...)...),
		Resources:       resources,
		VolumeMounts:    mounts,
		StartupProbe:    startupProbe(c),
		ReadinessProbe:  readinessProbe(c),
		LivenessProbe:   livenessProbe(c),
		SecurityContext: containerSecurityContext(),
		Lifecycle: &corev1.Lifecycle{
			// Lame duck mode moves clients away before the server stops.
			PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
				Command: []string{"nats-server", "--signal", "ldm=" + PidFile},
			}},
		},
	}
}

// serverEnv gives nats.conf its $VARs: the server name from the pod name,
// credentials straight from their Secrets. In mode users the passwords are
// not here: they come from users.conf (UsersConf), which a reload rereads.
// What stays is read once, at start: a change of it restarts the servers
// (Inputs.CredentialsHash).
func serverEnv(c *v1alpha1.NatsCluster, resources corev1.ResourceRequirements) []corev1.EnvVar {
	env := []corev1.EnvVar{{
		Name:      EnvPodName,
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}},
	}, {
		// nats-server lexes an environment value as config: a bare pod name
		// such as 1-a-0 reads as a malformed date and the server refuses to
		// start. Quoted (the kubelet expands $(POD_NAME)), it is a string.
		Name:  EnvServerName,
		Value: `"$(` + EnvPodName + `)"`,
	}}
	if ref, ok := c.ClientSecretRef(); ok && c.Spec.Auth.Mode == v1alpha1.AuthToken {
		env = append(env, secretEnv(EnvToken, ref.Name, ref.Key))
	}
	if c.HasRoutes() {
		// The route list is read at start: a server started before a
		// scale-out does not dial the new servers, they dial it.
		env = append(env,
			secretEnv(EnvRoutePassword, c.RouteSecretName(), PasswordKey),
			secretEnv(EnvRouteURLs, c.RouteSecretName(), RouteURLsKey),
			corev1.EnvVar{Name: EnvRouteAdvertise, Value: routeAdvertise(c)})
	}
	env = append(env, topologyEnv(c)...)
	env = append(env, zoneEnv(c)...)
	if limit := goMemLimit(resources); limit != "" {
		env = append(env, corev1.EnvVar{Name: "GOMEMLIMIT", Value: limit})
	}
	return env
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret},
		Key:                  key,
	}}}
}
