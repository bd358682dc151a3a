package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// userSecretIndex indexes resources by the user Secrets they name, so that
// a rotated (or newly opted-in) Secret wakes exactly its users.
const userSecretIndex = "kubenats.io/user-secret"

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

// jetStreamSecrets are the user Secrets a JetStream resource names.
func jetStreamSecrets(o client.Object) []string {
	conn := o.(v1alpha1.JetStreamObject).GetTarget().Connection
	if conn == nil {
		return nil
	}
	var out []string
	if conn.CredentialsSecretRef != nil {
		out = append(out, conn.CredentialsSecretRef.Name)
	}
	if conn.TLSSecretRef != nil && (conn.CredentialsSecretRef == nil || conn.TLSSecretRef.Name != conn.CredentialsSecretRef.Name) {
		out = append(out, conn.TLSSecretRef.Name)
	}
	return out
}

// userSecretSource is a watch of the opted-in Secrets that enqueues the
// objects of list's kind, in the Secret's namespace, that name it.
func userSecretSource(secrets cache.Cache, reader client.Reader, newList func() client.ObjectList) source.Source {
	return source.Kind(secrets, &corev1.Secret{}, handler.TypedEnqueueRequestsFromMapFunc(
		func(ctx context.Context, s *corev1.Secret) []reconcile.Request {
			list := newList()
			if err := reader.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingFields{userSecretIndex: s.Name}); err != nil {
				return nil
			}
			return requestsFor(list)
		}))
}
