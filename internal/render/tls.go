package render

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
)

// Keys of a TLS Secret, as cert-manager and kubernetes.io/tls write them.
const (
	TLSCertKey = corev1.TLSCertKey       // tls.crt
	TLSKeyKey  = corev1.TLSPrivateKeyKey // tls.key
	TLSCAKey   = "ca.crt"
)

// Where the pods mount their certificates. nats-server rereads the files
// on every reload, which is how a renewed certificate is served without a
// restart.
const (
	TLSDir       = "/etc/nats-tls"
	RouteTLSDir  = TLSDir + "/routes"
	ClientTLSDir = TLSDir + "/client"
)

// Volume names of the certificates; the controller reads the client one
// to tell what a template serves (plan.ClientTLSServed).
const (
	routeTLSVolume  = "routes-tls"
	ClientTLSVolume = "client-tls"
)

// routeTLSHandshakeTimeout is generous: a route that times out its
// handshake on a busy node is retried a second later, a stall for nothing.
const routeTLSHandshakeTimeout = 5e9 // 5 s

// routeTLS is the cluster block's tls: mutual, against the route CA.
func routeTLS(c *v1alpha1.NatsCluster) *natsconf.TLS {
	if !c.Spec.RouteTLSEnabled() {
		return nil
	}
	return &natsconf.TLS{
		CertFile: RouteTLSDir + "/" + TLSCertKey,
		KeyFile:  RouteTLSDir + "/" + TLSKeyKey,
		CAFile:   RouteTLSDir + "/" + TLSCAKey,
		Verify:   true,
		Timeout:  routeTLSHandshakeTimeout,
	}
}

// clientTLS is the client listener's tls.
func clientTLS(c *v1alpha1.NatsCluster) *natsconf.TLS {
	ct := c.Spec.ClientTLS()
	return &natsconf.TLS{
		CertFile:       ClientTLSDir + "/" + TLSCertKey,
		KeyFile:        ClientTLSDir + "/" + TLSKeyKey,
		CAFile:         ClientTLSDir + "/" + TLSCAKey,
		Verify:         ct.Verify,
		HandshakeFirst: ct.HandshakeFirst,
	}
}

// tlsVolumes mount the certificate Secrets. The Secret of a certificate
// still being issued may not exist yet: the pod waits for it
// (ContainerCreating), which is what the CertificatesReady condition says.
func tlsVolumes(c *v1alpha1.NatsCluster) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(volume, secret, dir string) {
		vols = append(vols, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  secret,
			DefaultMode: int32Ptr(0o440),
			Items: []corev1.KeyToPath{
				{Key: TLSCertKey, Path: TLSCertKey}, {Key: TLSKeyKey, Path: TLSKeyKey}, {Key: TLSCAKey, Path: TLSCAKey},
			},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: volume, MountPath: dir, ReadOnly: true})
	}
	if c.Spec.RouteTLSEnabled() && c.Spec.ReplicaCount() > 1 {
		add(routeTLSVolume, c.RouteTLSSecretName(), RouteTLSDir)
	}
	add(ClientTLSVolume, c.ClientTLSSecretName(), ClientTLSDir)
	topologyTLS(c, add)
	return vols, mounts
}

func int32Ptr(v int32) *int32 { return &v }
