package servers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// CertificateSecretData is the data of the Secret holding the certificate
// of c's listener (routes, client, leafnodes, gateway). Where the spec
// names no Secret for it, only the Secret the operator writes or asked
// cert-manager for, under exactly that name and carrying c's labels, is
// read (from the cache, which holds the operator's own); where the spec
// names one, it is the user's, read only if its owner opted it in, and
// never one the operator or cert-manager wrote (usersecrets.Usable). A name the
// spec chose is never looked up among the operator's Secrets: a tenant
// naming <name>-ca, <name>-client-ca or a cert-manager CA Secret as its
// client certificate would have the CA's key mounted into its own image.
// refusal says why the Secret cannot be used (missing included).
func CertificateSecretData(ctx context.Context, cached, userSecrets client.Reader, c *v1alpha1.NatsCluster, listener string) (_ map[string][]byte, refusal string, _ error) {
	name, ours := certificateSource(c, listener)
	if !ours {
		user, refusal, err := usersecrets.Get(ctx, userSecrets, c.Namespace, name, "spec.tls")
		if err != nil || refusal != "" {
			return nil, refusal, err
		}
		return user.Data, "", nil
	}
	var s corev1.Secret
	err := cached.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s)
	switch {
	case err == nil && s.Labels[render.LabelInstance] == c.Name && s.Labels[render.LabelManagedBy] == render.ManagedBy:
		return s.Data, "", nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, "", err
	}
	return nil, fmt.Sprintf("spec.tls: Secret %q is where kubenats or cert-manager writes this cluster's certificate, and none carrying the cluster's labels is there (yet); a Secret of your own goes in secretName, labelled %s: %q",
		name, v1alpha1.SecretAllowLabel, v1alpha1.SecretAllowValue), nil
}

// certificateSource is the Secret of c's listener certificate, and
// whether it is the operator's own or cert-manager's for c (ours) rather
// than a Secret the spec names. It is decided from the spec alone, so
// that no name a tenant writes can select one of the operator's Secrets.
func certificateSource(c *v1alpha1.NatsCluster, listener string) (name string, ours bool) {
	switch listener {
	case "routes":
		return c.RouteTLSSecretName(), c.Spec.TLS.Routes.SecretName == ""
	case "leafnodes":
		t := c.Spec.Leafnodes
		return c.LeafnodesTLSSecretName(), t == nil || t.Accept == nil || t.Accept.TLS == nil || t.Accept.TLS.SecretName == ""
	case "gateway":
		return c.GatewayTLSSecretName(), c.Spec.Gateway == nil || c.Spec.Gateway.TLS.SecretName == ""
	}
	return c.ClientTLSSecretName(), c.Spec.ClientTLS().SecretName == ""
}
