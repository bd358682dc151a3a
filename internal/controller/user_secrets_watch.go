package controller

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// clusterSecrets are the user Secrets a NatsCluster names: its password or
// token, its own certificates, and its WebSocket Ingress's.
func clusterSecrets(o client.Object) []string {
	spec := o.(*v1alpha1.NatsCluster).Spec
	out := append(render.LeafnodeUserSecrets(o.(*v1alpha1.NatsCluster)), render.GatewayUserSecrets(o.(*v1alpha1.NatsCluster))...)
	if ref := spec.Auth.SecretRef; ref != nil {
		out = append(out, ref.Name)
	}
	if n := spec.TLS.Routes.SecretName; n != "" {
		out = append(out, n)
	}
	if n := spec.ClientTLS().SecretName; n != "" {
		out = append(out, n)
	}
	if spec.WebSocketIngressEnabled() {
		out = append(out, spec.WebSocket.Ingress.TLSSecretName)
	}
	return out
}
