package render

import (
	securityapi "istio.io/api/security/v1beta1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// The pieces leafnodes.go and gateway.go add to the objects every cluster
// has (container, Services, volumes, Certificates, NetworkPolicy, mesh
// policy, Secrets), each called from there in one line.

// TopologyCredentials are the values of the topology's Secrets, read or
// made by the controller.
type TopologyCredentials struct {
	// LeafnodePassword is what accepted leafnodes present (mode users).
	LeafnodePassword string
	// Remotes are the remotes' Secrets, by remote name.
	Remotes map[string]RemoteSecrets
	// GatewayUser and GatewayPassword are the supercluster's gateway
	// credentials, from the user's Secret.
	GatewayUser, GatewayPassword string
}

func topologyContainerPorts(c *v1alpha1.NatsCluster) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	if c.Spec.LeafnodesAccepted() {
		out = append(out, corev1.ContainerPort{Name: LeafnodePortName, ContainerPort: LeafnodePort, Protocol: corev1.ProtocolTCP})
	}
	if c.Spec.GatewayEnabled() {
		out = append(out, corev1.ContainerPort{Name: GatewayPortName, ContainerPort: GatewayPort, Protocol: corev1.ProtocolTCP})
	}
	return out
}

// topologyServicePorts: leafnodes on both Services (edge servers reach the
// client Service, Istio matches only ports the headless Service declares);
// the gateway on the headless Service only, since members dial each
// server by name.
func topologyServicePorts(c *v1alpha1.NatsCluster, headless bool) []corev1.ServicePort {
	var out []corev1.ServicePort
	if c.Spec.LeafnodesAccepted() {
		out = append(out, port(LeafnodePortName, LeafnodePort, leafnodeAppProtocol(c)))
	}
	if c.Spec.GatewayEnabled() && headless {
		// Gateway TLS is handshaken before the first protocol byte.
		out = append(out, port(GatewayPortName, GatewayPort, "tls"))
	}
	return out
}

// leafnodeAppProtocol is tcp even with TLS (INFO goes first in the
// clear), tls only for a TLS-first listener.
func leafnodeAppProtocol(c *v1alpha1.NatsCluster) string {
	if t := c.Spec.Leafnodes.Accept.TLS; t != nil && t.HandshakeFirst {
		return "tls"
	}
	return "tcp"
}

func topologyEnv(c *v1alpha1.NatsCluster) []corev1.EnvVar {
	var env []corev1.EnvVar
	if ref, ok := c.LeafnodeAuthRef(); ok {
		env = append(env, secretEnv(EnvLeafnodePassword, ref.Name, ref.Key))
	}
	if g := c.Spec.Gateway; g != nil {
		env = append(env,
			secretEnv(EnvGatewayUser, g.SecretRef.Name, GatewayUserKey),
			secretEnv(EnvGatewayPassword, g.SecretRef.Name, PasswordKey),
			corev1.EnvVar{Name: EnvGatewayAdvertise, Value: gatewayAdvertise(c)})
		for i := range g.Gateways {
			env = append(env, secretEnv(gatewayURLsEnv(i), c.GatewaysSecretName(), gatewayURLsKey(i)))
		}
	}
	return env
}

// topologyTLS are the leafnode and gateway certificates' volumes, through
// add (tlsVolumes' own).
func topologyTLS(c *v1alpha1.NatsCluster, add func(volume, secret, dir string)) {
	if c.Spec.LeafnodesAccepted() && c.Spec.Leafnodes.Accept.TLS != nil {
		add(leafnodesTLSVolume, c.LeafnodesTLSSecretName(), LeafnodesTLSDir)
	}
	if c.Spec.GatewayEnabled() {
		add(gatewayTLSVolume, c.GatewayTLSSecretName(), GatewayTLSDir)
	}
}

// topologyCertificates are the Certificates of the leafnode listener and
// the gateway when they name an issuer. Both are used as server and client
// certificates (a gateway dials as it accepts).
func topologyCertificates(c *v1alpha1.NatsCluster, clusterDomain string) []client.Object {
	var out []client.Object
	if c.Spec.LeafnodesAccepted() {
		if t := c.Spec.Leafnodes.Accept.TLS; t != nil && t.IssuerRef != nil {
			out = append(out, certificate(c, c.LeafnodesCertificateName(), c.LeafnodesTLSSecretName(), t.IssuerRef,
				c.ClientDNSNames(clusterDomain), clusterDomain, "server auth"))
		}
	}
	if g := c.Spec.Gateway; g != nil && g.TLS.IssuerRef != nil {
		out = append(out, certificate(c, c.GatewayCertificateName(), c.GatewayTLSSecretName(), g.TLS.IssuerRef,
			c.GatewayDNSNames(clusterDomain), clusterDomain, "server auth", "client auth"))
	}
	return out
}

// topologyIngress opens the leafnode port to spec.leafnodes.accept.from
// and the gateway port to the members named by clusterRef and
// spec.gateway.from. A port nobody is listed for gets no rule at all: a
// rule without peers would admit everyone.
func topologyIngress(c *v1alpha1.NatsCluster) ([]networkingv1.NetworkPolicyIngressRule, error) {
	var out []networkingv1.NetworkPolicyIngressRule
	if c.Spec.LeafnodesAccepted() {
		from, err := policyPeers("spec.leafnodes.accept.from", c.Spec.Leafnodes.Accept.From)
		if err != nil {
			return nil, err
		}
		if len(from) > 0 {
			out = append(out, ingressRule(LeafnodePort, from))
		}
	}
	if g := c.Spec.Gateway; g != nil {
		from, err := policyPeers("spec.gateway.from", g.From)
		if err != nil {
			return nil, err
		}
		members, err := memberPeers(c)
		if err != nil {
			return nil, err
		}
		if from = append(members, from...); len(from) > 0 {
			out = append(out, ingressRule(GatewayPort, from))
		}
	}
	return out, nil
}

// memberPeers select the servers of each member named by clusterRef: its
// namespace by name, its pods by the labels kubenats gives them.
func memberPeers(c *v1alpha1.NatsCluster) ([]networkingv1.NetworkPolicyPeer, error) {
	var out []networkingv1.NetworkPolicyPeer
	for _, r := range c.Spec.Gateway.Gateways {
		if r.ClusterRef == nil {
			continue
		}
		ns := r.ClusterRef.Namespace
		if ns == "" {
			ns = c.Namespace
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, &fieldError{"spec.gateway.gateways[" + r.Name + "].clusterRef.namespace", errs[0]}
		}
		ref := &v1alpha1.NatsCluster{}
		ref.Name = r.ClusterRef.Name
		out = append(out, networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: ManagedSelectorLabels(ref)},
		})
	}
	return out, nil
}

type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

// topologyMeshLevels: the leafnode and gateway ports are DISABLE in the
// mesh policy. Their peers are outside the mesh as a rule (edge servers,
// other clusters), NATS speaks first, and a PERMISSIVE sidecar waits for
// the client's first bytes, which a leafnode or gateway never sends
// first: it would hang. The servers' own TLS and authentication guard
// these ports.
func topologyMeshLevels(c *v1alpha1.NatsCluster, levels map[uint32]*securityapi.PeerAuthentication_MutualTLS) {
	disable := &securityapi.PeerAuthentication_MutualTLS{Mode: securityapi.PeerAuthentication_MutualTLS_DISABLE}
	if c.Spec.LeafnodesAccepted() {
		levels[LeafnodePort] = disable
	}
	if c.Spec.GatewayEnabled() {
		levels[GatewayPort] = disable
	}
}

// topologySecrets are the Secrets the operator writes for the topology:
// the generated leafnode password, leafnodes.conf with the remotes' files,
// and the members' gateway URLs.
func topologySecrets(c *v1alpha1.NatsCluster, cred TopologyCredentials) []*corev1.Secret {
	var out []*corev1.Secret
	if ref, ok := c.LeafnodeAuthRef(); ok && c.Spec.Leafnodes.Accept.SecretRef == nil {
		out = append(out, Secret(c, ref.Name, map[string]string{ref.Key: cred.LeafnodePassword}))
	}
	if c.HasLeafnodesFile() {
		// The controller refuses what LeafnodesFiles cannot write first.
		if data, _, err := LeafnodesFiles(c, cred.Remotes); err == nil {
			out = append(out, Secret(c, c.LeafnodesSecretName(), data))
		}
	}
	if c.Spec.GatewayEnabled() {
		if data, err := GatewaysData(c, cred.GatewayUser, cred.GatewayPassword); err == nil {
			out = append(out, Secret(c, c.GatewaysSecretName(), data))
		}
	}
	return out
}
